-- random_points: SELECT c FROM sbtest1 WHERE id IN (--range-size random values).
require("flamediff_suite")

points_bench("SELECT c FROM sbtest1 WHERE id IN (")
