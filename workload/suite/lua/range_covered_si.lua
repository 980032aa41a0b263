-- range_covered_si: SELECT id, k FROM sbtest1 WHERE k BETWEEN x AND x + --range-size.
require("flamediff_suite")

range_bench("SELECT id, k FROM sbtest1 WHERE k BETWEEN ? AND ?")
