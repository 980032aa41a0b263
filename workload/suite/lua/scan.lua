-- scan: a full scan of sbtest1 that returns no rows (c, unindexed, is
-- never empty). Its cost per query grows with --table-size: report rows
-- scanned per second (queries x table size) as its throughput.
require("flamediff_suite")

function thread_init()
   params = suite_prepare("SELECT id FROM sbtest1 WHERE c = ''", {})
end

function event()
   suite_execute()
end
