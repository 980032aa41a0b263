-- points_notcovered_pk: SELECT id, c FROM sbtest1 WHERE id IN (--range-size random values).
require("flamediff_suite")

points_bench("SELECT id, c FROM sbtest1 WHERE id IN (")
