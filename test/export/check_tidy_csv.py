#!/usr/bin/python3
"""Load a `kibench export --format csv` file back as a data frame would:
RFC 4180 records (Python's csv module, strict), a header of unique names,
every record as long as the header, and every numeric column — the axes,
scalars, statistics and measurements (names ending in _ns, _bytes, _tflops,
_watts, _joules, _mhz, and the others listed below) — holding only numbers
or empty fields, so that pandas.read_csv gives it a numeric dtype. When
pandas is installed it is asked as well.

usage: check_tidy_csv.py FILE EXPECTED_ROWS
Exit 0 when it loads, 1 naming each problem."""
import csv
import math
import re
import sys

NUMERIC = {"tokens", "vocab", "hidden", "student_hidden", "ignore_fraction", "beta", "temperature",
           "weight_hard_loss", "weight_soft_loss", "ignore_index", "samples", "throttled_samples",
           "max_absolute_error", "max_relative_error", "matched_ratio", "warmup_iterations",
           "hardware_count", "memory_bytes"}
NUMERIC_SUFFIX = re.compile(r"_(ns|bytes|tflops|watts|joules|mhz)$|^rel_l2_error_")
BOOLEAN = {"clocks_locked", "ecc_enabled", "persistence_mode"}


def main():
    path, expected_rows = sys.argv[1], int(sys.argv[2])
    problems = []
    with open(path, newline="", encoding="utf-8") as f:
        records = list(csv.reader(f, strict=True))
    header, rows = records[0], records[1:]
    if len(set(header)) != len(header):
        problems.append("header: a column name repeats")
    if len(rows) != expected_rows:
        problems.append(f"{len(rows)} rows, expected {expected_rows}")
    numeric = [c for c in header if c in NUMERIC or NUMERIC_SUFFIX.search(c)]
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            problems.append(f"line {line}: {len(row)} fields, the header has {len(header)}")
            continue
        for column, value in zip(header, row):
            if column in numeric and value != "":
                try:
                    if not math.isfinite(float(value)):
                        problems.append(f"line {line}: {column} = {value!r} is not finite")
                except ValueError:
                    problems.append(f"line {line}: {column} = {value!r} is not a number")
            if column in BOOLEAN and value not in ("", "true", "false"):
                problems.append(f"line {line}: {column} = {value!r} is not true/false")
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        frame = pandas.read_csv(path)
        for column in numeric:
            if frame[column].notna().any() and frame[column].dtype.kind not in "iuf":
                problems.append(f"pandas: {column} has dtype {frame[column].dtype}")
    for problem in problems:
        print(problem)
    print(f"{path}: {len(rows)} rows, {len(header)} columns, {len(numeric)} numeric"
          f"{', checked with pandas' if pandas is not None else ''}; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
