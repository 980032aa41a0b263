-- range_covered_pk: SELECT id FROM sbtest1 WHERE id BETWEEN x AND x + --range-size.
require("flamediff_suite")

range_bench("SELECT id FROM sbtest1 WHERE id BETWEEN ? AND ?")
