# Run 4's CSVs against run 1's (the grader of 004dfd7), written "9/18" then and "9 of 18" now: the
# verdicts, the passed count and the score of every row, with the old count's form read as the new.
import csv, re
def load(path):
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    return rows[0], {row[0]: row for row in rows[1:]}
def as_now(value):
    m = re.fullmatch(r"(\d+)/(\d+)", value)
    return f"{m[1]} of {m[2]}" if m else value
for old, new in [("run-1/01-simpson-new.csv", "run-4/01-simpson.csv"), ("run-1/03-mmm-tiled-new.csv", "run-4/03-mmm-tiled.csv")]:
    ho, o = load(old)
    hn, n = load(new)
    columns = ho[2:ho.index("passed") + 1] + ["score"]
    same = sum(1 for s in o if s in n and [as_now(o[s][ho.index(c)]) for c in columns] == [n[s][hn.index(c)] for c in columns])
    print(f"{new}: {same} of {len(o)} rows with the verdicts, passed count and score of {old} ({len(n)} rows now)")
