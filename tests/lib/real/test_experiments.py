"""hetlab.real.experiments: the timed experiments return numbers whose structure does not depend on the machine."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.real import experiments as X
from hetlab.real import measure
from hetlab.workloads import article_tasks


def test_run_is_cpu_seconds_per_wall_second_and_validated():
    assert X.Run(2.0, 1.0).parallelism == 0.5
    with pytest.raises(ValueError, match="wall"):
        X.Run(0.0, 1.0)
    with pytest.raises(ValueError, match="cpu"):
        X.Run(1.0, -1.0)


def test_gil_experiment_small():
    g = X.gil_experiment(threads=4, processes=2, work_seconds=0.04, wait_seconds=0.02,
                         steps_per_second=measure.loop_rate(0.01))
    assert (g.threads, g.processes) == (4, 2) and g.cpus == measure.cpu_count()
    assert 0 < g.thread_pool.parallelism <= 1.05          # the GIL, whatever the load
    assert 0 < g.serial.parallelism <= 1.05               # one thread is at most one core
    assert g.process_pool.parallelism <= min(2, g.cpus) + 0.05
    # four 20 ms waits: 80 ms one after another, about 20 ms on four threads
    assert g.wait_serial.wall >= 0.08 and g.wait_threads.wall < 0.06
    with pytest.raises(ValueError, match="work_seconds"):
        X.gil_experiment(work_seconds=100.0)
    with pytest.raises(ValueError, match="threads"):
        X.gil_experiment(threads=0)


def test_plan_runs_return_the_median_run_of_each_kind():
    plan = S.article_demo(article_tasks(), kitchen())
    runs = X.plan_runs(plan, 0.002, steps_per_second=measure.loop_rate(0.01), repeat=1)
    assert set(runs) == {"thread pool", "process pool", "sequential"}
    assert runs["sequential"].policy == "sequential" and (runs["process pool"].device_of == plan.device_of).all()
    with pytest.raises(ValueError, match="repeat"):
        X.plan_runs(plan, 0.002, steps_per_second=1e6, repeat=0)
    with pytest.raises(ValueError, match="seconds_per_unit"):
        X.plan_runs(plan, 10.0, steps_per_second=1e6)


def test_sweep_counts_add_p_p_plus_one_and_2p():
    assert X.sweep_counts(2, (1, 8)) == (1, 2, 3, 4, 8)
    assert X.sweep_counts(16, (1, 2, 4)) == (1, 2, 4, 16, 17, 32)
    with pytest.raises(ValueError, match="workers"):
        X.sweep_counts(0)


def test_rounds_sweep_shows_the_extra_round_of_p_plus_one_tasks():
    # 0.06 s of waiting on 2 workers: 3 tasks take two rounds of 20 ms (40 ms), 4 tasks two of 15 ms (30 ms)
    s = X.rounds_sweep(0.06, (1, 2), workers=2, repeat=1)
    assert s.counts == (1, 2, 3, 4) and s.workers == 2 and s.total == 0.06
    assert s.at(1) >= 0.06 and s.at(3) >= 0.04 and s.at(2) >= 0.03
    with pytest.raises(ValueError, match="count"):
        s.at(5)
    with pytest.raises(ValueError, match="total_seconds"):
        X.rounds_sweep(10.0)


def test_sweep_reading_checks_its_fields():
    with pytest.raises(ValueError, match="same length"):
        X.SweepReading(2, 0.2, (1, 2), (0.2,))
    with pytest.raises(ValueError, match="seconds"):
        X.SweepReading(2, 0.2, (1,), (0.0,))


def test_u_curve_sweep_gives_every_task_a_thread():
    # 20 ms of waiting: one task waits it all; four tasks on four threads each wait 5 ms, at once
    s = X.u_curve_sweep(0.02, (4, 1), repeat=1)
    assert s.counts == (1, 4) and s.workers == 4 and s.total == 0.02
    assert s.at(1) >= 0.02 and s.at(4) >= 0.005
    assert X.U_COUNTS == tuple(sorted(X.U_COUNTS)) and max(X.U_COUNTS) == 512
    with pytest.raises(ValueError, match="total_seconds"):
        X.u_curve_sweep(1.0)
    with pytest.raises(ValueError, match="counts"):
        X.u_curve_sweep(0.01, (0, 2))
    with pytest.raises(ValueError, match="repeat"):
        X.u_curve_sweep(0.01, (1,), repeat=0)


def test_queued_tasks_marks_tasks_ready_while_their_worker_was_busy():
    from hetlab.devices import Device
    from hetlab.tasks import Task, TaskGraph
    g = TaskGraph([Task("a", 2.0), Task("b", 2.0), Task("c", 2.0)], [("a", "c")])
    # two workers: a and b start at once on idle workers (released); c becomes ready at 2 ms when a's worker
    # has just freed, so that worker was idle: released too
    two = S.central_queue(g, [Device(f"w{k}", "CPU", 1000.0) for k in range(2)], ready="fifo")
    assert X.queued_tasks(two).tolist() == [False, False, False]
    # one worker: b was ready at 0 while a ran, c at 2 ms while b ran (2-4 ms): both queued
    one = S.central_queue(g, [Device("w", "CPU", 1000.0)], ready="fifo")
    assert X.queued_tasks(one).tolist() == [False, True, True]
    with pytest.raises(TypeError, match="schedule"):
        X.queued_tasks("not a schedule")
