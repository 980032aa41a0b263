-- range_notcovered_pk: SELECT id, c FROM sbtest1 WHERE id BETWEEN x AND x + --range-size.
require("flamediff_suite")

range_bench("SELECT id, c FROM sbtest1 WHERE id BETWEEN ? AND ?")
