-- update_inlist: UPDATE sbtest1 SET c = ? WHERE id IN (10 random ids), a
-- non-index update of ten rows by primary key in one statement.
require("flamediff_suite")

INLIST = 10

function thread_init()
   local types = int_types(INLIST + 1)
   types[1] = sysbench.sql.type.CHAR
   params = suite_prepare("UPDATE sbtest1 SET c = ? WHERE id IN (" .. placeholders(INLIST) .. ")", types)
end

function event()
   params[1]:set_rand_str(c_template)
   for j = 2, INLIST + 1 do
      params[j]:set(random_id())
   end
   suite_execute()
end
