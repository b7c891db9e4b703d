import csv, sys
def load(path):
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    return rows[0], {row[0]: row for row in rows[1:]}
base_header, base = load(sys.argv[1])
verdicts = base_header[2:base_header.index("passed") + 1]
for other in sys.argv[2:]:
    header, rows = load(other)
    same = 0
    for student, row in sorted(base.items()):
        theirs = rows.get(student)
        if theirs is None:
            print(f"{other}: {student} missing"); continue
        a = [row[base_header.index(c)] for c in verdicts]; b = [theirs[header.index(c)] for c in verdicts]
        sa, sb = row[base_header.index("score")], theirs[header.index("score")]
        if a != b or sa != sb:
            diff = [f"{c}: {x} -> {y}" for c, x, y in zip(verdicts, a, b) if x != y]
            print(f"{other}: {student}: score {sa} -> {sb}; " + "; ".join(diff))
        else:
            same += 1
    print(f"{other}: {same} of {len(base)} rows with the same verdicts and score as {sys.argv[1]}")
