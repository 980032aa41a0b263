-- update_zipf: UPDATE sbtest1 SET c = ? WHERE id = ?, a non-index update
-- whose ids follow a zipfian distribution (--zipf-theta, 0.99 by default;
-- id 1 is the hottest), since sysbench 1.0.20 has no zipfian --rand-type.
require("flamediff_suite")

function thread_init()
   zipf_init(sysbench.opt.table_size, sysbench.opt.zipf_theta)
   params = suite_prepare("UPDATE sbtest1 SET c = ? WHERE id = ?",
      {sysbench.sql.type.CHAR, sysbench.sql.type.INT})
end

function event()
   params[1]:set_rand_str(c_template)
   params[2]:set(zipf_next())
   suite_execute()
end
