-- points_covered_si: SELECT id, k FROM sbtest1 WHERE k IN (--range-size random values).
require("flamediff_suite")

points_bench("SELECT id, k FROM sbtest1 WHERE k IN (")
