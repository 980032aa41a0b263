-- points_covered_pk: SELECT id FROM sbtest1 WHERE id IN (--range-size random values).
require("flamediff_suite")

points_bench("SELECT id FROM sbtest1 WHERE id IN (")
