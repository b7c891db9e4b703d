#!/usr/bin/env python3
"""Issue 65: do CSVs of grade.sh give the same verdicts? Times aside: the student and file columns,
"time ratio", and the "suspiciously fast" part of the note (from times) are left out, and the note's
quote of the submission's own path; every other cell must be equal.

  same-verdicts.py copies CLASS.csv ORIGINALS.txt ONE-AT-A-TIME.csv   each copy against its original,
                                                                     graded alone (--jobs 1), whose
                                                                     student is KIND-NAME
  same-verdicts.py kept CLASS-CHECKS/ ORIGINALS.txt ALONE-CHECKS/    the same from the kept --check
                                                                     outputs (the lab's own CSV row)
  same-verdicts.py class CLASS.csv ORIGINALS.txt                     the copies of each original
                                                                     against its first copy
  same-verdicts.py kept-runs ORIGINALS.txt ALONE-CHECKS/ CLASS-CHECKS/
                                                                     two runs of copies of one class
                                                                     (make-class.sh, the same names):
                                                                     each copy's kept output against
                                                                     ALONE's for the same original,
                                                                     else against the class's first
                                                                     copy of it
  same-verdicts.py rounds A.csv B.csv ...                             every round against the first
  same-verdicts.py tables NAME-1.log NAME-2.log ...                   a program week's --check tables:
                                                                     each case's verdict on each rule
                                                                     against the first log's, and the
                                                                     spread of the measured ratios
Prints one line per difference and a summary; exit 1 if any differ."""
import csv
import re
import sys

IGNORED = {"student", "file", "time ratio", "flags"}


def rows(path):
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    header, body = table[0], table[1:]
    return header, {row[0]: dict(zip(header, row)) for row in body}


def kept_row(path):
    """The lab's CSV row in a kept --check output: the line after its header (`file,...`)."""
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines[:-1]):
        if line.startswith("file,"):
            header, row = next(csv.reader([line])), next(csv.reader([lines[i + 1]]))
            return dict(zip(header, row))
    return None


def verdicts(row):
    kept = {k: v for k, v in row.items() if k not in IGNORED}
    if "note" in kept:
        kept["note"] = re.sub(r"suspiciously fast: [^;]*;? ?", "", kept["note"]).strip()
        if row.get("file"):  # a copy's note may quote its own path
            kept["note"] = kept["note"].replace(row["file"], "<file>")
    return kept


def differences(name, got, want):
    return [f"{name}: {k}: {got.get(k)!r} against {want.get(k)!r}" for k in want if got.get(k) != want.get(k)]


def table(path):
    """The rows of a --check table: (case, rule) -> (verdict, measured)."""
    found = {}
    for line in open(path, errors="replace"):
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) == 5 and cells[0][:1].isdigit():
            found[(cells[0], cells[1])] = (cells[4], cells[2])
    return found


def main():
    mode, *paths = sys.argv[1:]
    found = []
    compared = 0
    if mode == "copies":
        class_csv, originals_txt, alone_csv = paths
        _, copies = rows(class_csv)
        _, alone = rows(alone_csv)
        for line in open(originals_txt):
            copy, original = line.rstrip("\n").split("\t")
            student = copy[: -len(".cu")]
            kind, name = original.split("/")
            want = alone.get(f"{kind}-{name[: -len('.cu')]}")
            got = copies.get(student)
            if want is None or got is None:
                found.append(f"{student}: no row ({'original' if want is None else 'copy'})")
                continue
            compared += 1
            found += differences(student, verdicts(got), verdicts(want))
    elif mode == "kept":
        class_dir, originals_txt, alone_dir = paths
        for line in open(originals_txt):
            copy, original = line.rstrip("\n").split("\t")
            kind, name = original.split("/")
            want = kept_row(f"{alone_dir}/{kind}-{name}.txt")
            if want is None:
                continue  # not graded alone
            got = kept_row(f"{class_dir}/{copy}.txt")
            if got is None:
                found.append(f"{copy}: no row")
                continue
            compared += 1
            found += differences(copy, verdicts(got), verdicts(want))
    elif mode == "class":
        class_csv, originals_txt = paths
        _, copies = rows(class_csv)
        first_of = {}
        for line in open(originals_txt):
            copy, original = line.rstrip("\n").split("\t")
            student = copy[: -len(".cu")]
            if student not in copies:
                found.append(f"{student}: no row")
                continue
            if original not in first_of:
                first_of[original] = student
                continue
            compared += 1
            first = first_of[original]
            found += [f"{d} (against {first})" for d in differences(student, verdicts(copies[student]), verdicts(copies[first]))]
    elif mode == "kept-runs":
        originals_txt, alone_dir, class_dir = paths
        original_of = dict(line.rstrip("\n").split("\t") for line in open(originals_txt))
        alone, first_of = {}, {}
        for copy, original in original_of.items():
            row = kept_row(f"{alone_dir}/{copy}.txt")
            if row is not None and original not in alone:
                alone[original] = (copy, row)
        for copy, original in original_of.items():
            got = kept_row(f"{class_dir}/{copy}.txt")
            if got is None:
                continue  # not graded in the class's run
            want = alone.get(original) or first_of.get(original)
            if want is None:
                first_of[original] = (copy, got)
                continue
            compared += 1
            found += [f"{d} (against {want[0]})" for d in differences(copy, verdicts(got), verdicts(want[1]))]
    elif mode == "rounds":
        _, first = rows(paths[0])
        for path in paths[1:]:
            _, other = rows(path)
            for student, row in first.items():
                compared += 1
                if student not in other:
                    found.append(f"{path}: {student}: no row")
                    continue
                found += [f"{path}: {d}" for d in differences(student, verdicts(other[student]), verdicts(row))]
    elif mode == "tables":
        first = table(paths[0])
        spread = {}
        for path in paths:
            got = table(path)
            for key, (verdict, measured) in got.items():
                for value in re.findall(r"\(([0-9.]+)x\)|([0-9]+)%", measured):
                    number = float(value[0] or value[1])
                    low, high = spread.get(key, (number, number))
                    spread[key] = (min(low, number), max(high, number))
            if path == paths[0]:
                continue
            for key, (verdict, _) in first.items():
                compared += 1
                other = got.get(key, ("no row", ""))[0]
                if other != verdict:
                    found.append(f"{path}: {key}: {other} against {verdict}")
            found += [f"{path}: {key}: a row the first has not" for key in got if key not in first]
        for (case, rule), (low, high) in sorted(spread.items()):
            print(f"spread: {case} | {rule} | {low:g} to {high:g}")
        if not first:
            found.append(f"{paths[0]}: no table")
    for line in found:
        print(line)
    print(f"{compared} rows compared, {len(found)} differences")
    sys.exit(1 if found else 0)


main()
