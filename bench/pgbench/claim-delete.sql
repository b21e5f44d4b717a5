-- Claim the 100 oldest rows no one else holds and delete them: a queue's floor.
with claimed as (select id from bench_queue order by id limit 100 for update skip locked)
delete from bench_queue q using claimed where q.id = claimed.id;
