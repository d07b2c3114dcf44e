"""Appendix A1.4's prediction interval: a split-conformal band from stored (calibration, run) pairs
(:func:`error_band`), calibrated within the condition the reader's run is in (Mondrian conformal prediction:
:func:`condition` classes the stored pairs and the reader's run by one rule, :func:`matching_pairs` picks the pairs),
and the check after the run that the pair stayed in that condition (:func:`left_condition`). Re-exported by
:mod:`hetlab.book.readings.a1`.
"""
from __future__ import annotations

import math

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.readings.a1_calibration import _refs
from hetlab.book.reference import Reference

__all__ = ["error_band", "enough_pairs", "CONDITIONS", "condition", "matching_pairs", "reference_pairs",
           "DURING_NOISE", "stayed", "left_condition", "DISTURBED", "steady"]


def _pairs(pairs, name: str = "pairs", least: int = 9) -> np.ndarray:
    """``pairs`` checked: (predicted, measured) extra seconds per (calibration, run) pair, at least ``least`` of
    them, the predictions positive (a stored pair may carry up to three more numbers, ignored here: the busy CPUs
    read before it, the whole machine's, those other programs kept busy during it); ``name`` for the messages."""
    rows = [check_sequence(name, p) for p in check_sequence(name, pairs)]
    if len(rows) < least or any(len(r) not in (2, 3, 4, 5) for r in rows):
        raise ValueError(f"{name} must hold at least {least} (predicted, measured) pairs of seconds, got {len(rows)} "
                         f"rows of lengths {sorted({len(r) for r in rows})}")
    rows = [(check_positive(name, r[0], high=60.0), _extra_seconds(name, r[1])) for r in rows]
    return np.array(rows, dtype=float).reshape(len(rows), 2)


def _extra_seconds(name: str, value) -> float:
    """A measured extra time in seconds: a run may even beat the simulation a little (Graham's anomaly)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must hold numbers (seconds), got {type(value).__name__} {value!r}")
    if not -1.0 <= float(value) <= 60.0:
        raise ValueError(f"{name} must hold seconds of extra time in [-1, 60], got {value!r}")
    return float(value)


def _ranks(n: int, coverage: float) -> tuple[int, int]:
    """The 1-based ranks of the low and high order statistics of :func:`error_band` among ``n`` ratios."""
    # 1e-9: (n + 1)(1 - 0.9) / 2 is 0.999... in floating point where it is 1 exactly (n = 19, 39, ...)
    return (max(1, math.floor((n + 1) * (1 - coverage) / 2 + 1e-9)),
            min(n, math.ceil((n + 1) * (1 + coverage) / 2 - 1e-9)))


def error_band(pairs, coverage: float = 0.9) -> tuple[float, float]:
    """The factors (low, high) by which a prediction of A1.4's extra time is multiplied to give its interval:
    order statistics of measured / predicted over ``pairs``, each one whole calibration followed at once by one
    run (split conformal prediction: with ``n`` exchangeable pairs, the ``floor((n + 1)(1 - coverage) / 2)``-th
    smallest ratio and the ``ceil((n + 1)(1 + coverage) / 2)``-th smallest hold a new pair's ratio between them
    with probability at least ``coverage``, where the ranks fall inside 1..n; for 20 pairs at 90 % they are the
    least and the greatest, 19/21). What the ratios carry, the interval carries: how far one calibration misses
    its machine and how one run scatters, under the conditions the pairs were recorded in; not a change of the
    machine between a calibration and a run taken apart in time.

    >>> error_band([(1.0, r) for r in (0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 0.95, 1.05, 0.85, 1.15)], coverage=0.8)
    (0.8, 1.3)
    """
    rows = _pairs(pairs)
    coverage = check_positive("coverage", coverage, high=0.99)
    least = enough_pairs(coverage)
    if len(rows) < least:      # the ranks would be clamped to 1..n and the band would hold less than it says
        raise ValueError(f"pairs must hold at least {least} pairs for a {coverage:.0%} band "
                         f"(ceil(2 / (1 - coverage)) - 1), got {len(rows)}")
    ratios = np.sort(rows[:, 1] / rows[:, 0])
    lo, hi = _ranks(len(ratios), coverage)
    return float(ratios[lo - 1]), float(ratios[hi - 1])


def enough_pairs(coverage: float = 0.9) -> int:
    """The fewest pairs whose :func:`error_band` at ``coverage`` needs no clamping of its ranks (below it, even the
    least and greatest ratio hold a new pair with probability less than ``coverage``).

    >>> enough_pairs(0.9), enough_pairs(0.8), enough_pairs(0.5)
    (19, 9, 3)
    """
    coverage = check_positive("coverage", coverage, high=0.99)
    return math.ceil(2 / (1 - coverage) - 1 - 1e-9)


#: The conditions A1.4's reference pairs were recorded in (``dag["condition"]``), as the chapter names them.
CONDITIONS = {"idle": "空闲", "busy": "忙碌", "one-cpu": "只用 1 个 CPU"}
#: Fewer busy CPUs than this (other programs', sampled just before the calibration) counts as idle: the idle and
#: one-CPU references read at most 0.05 before every pair, so a reading up to 0.2 is still their condition.
IDLE_BELOW = 0.2
#: Busy means other programs fill the CPUs but this many: the busy reference's two spinning processes read 1.95 or
#: more of 2 CPUs before every pair (review A1-23 #4: 0.5 let a machine at 1.65 borrow the busy band as "90%").
#: Between idle and busy no reference was recorded.
FULL_WITHIN = 0.1


def condition(cpus: int, busy: float | None, machine: float | None = None) -> str | None:
    """Which of :data:`CONDITIONS` a machine with ``cpus`` usable CPUs, ``busy`` of them kept busy by other
    programs (:func:`hetlab.real.cpu_load.busy_cpus`; None where unknown), is in; None when it cannot tell or when
    it is a case no reference was recorded in (partly busy; one CPU while other programs run on the machine).
    ``machine``: the busy CPUs of the whole machine (``busy_cpus(machine=True)``), needed for one CPU: a program on
    another CPU is invisible to the pinned process's own reading and can move onto its CPU during the run. The same
    function classes the stored pairs (each with the readings taken before its calibration) and the reader's run.

    >>> condition(1, 0.1, 0.1), condition(1, 0.1, 1.0), condition(1, 0.1), condition(2, 0.1), condition(2, 1.0)
    ('one-cpu', None, None, 'idle', None)
    >>> condition(2, 1.9), condition(8, None)
    ('busy', None)
    """
    cpus = check_int("cpus", cpus, low=1, high=4096)
    machine = None if machine is None else check_nonnegative("machine", machine, high=4096.0)
    if busy is None:
        return None
    busy = check_nonnegative("busy", busy, high=4096.0)
    if busy < IDLE_BELOW:
        if cpus > 1:
            return "idle"
        quiet = machine is not None and machine < IDLE_BELOW
        return "one-cpu" if quiet else None
    return "busy" if cpus > 1 and busy >= cpus - FULL_WITHIN else None


def _stored_pairs(ref: Reference) -> list[tuple[str | None, tuple[float, float]]]:
    """A reference's band pairs, each with its condition: classed by :func:`condition` from the busy CPUs read
    before its calibration (a third number; a fourth: the whole machine's), else by the recorded condition."""
    d = ref.dag
    cpus = d.get("cpus", ref.cpus)
    return [(condition(cpus, row[2], row[3] if len(row) > 3 else None) if len(row) > 2 else d.get("condition"),
             (float(row[0]), float(row[1]))) for row in d["pairs"]]


def matching_pairs(reference, cpus: int, busy: float | None, workers: int,
                   machine: float | None = None) -> tuple[list[tuple[float, float]], str, bool]:
    """The reference pairs in the condition of this machine, with the same pool size (Mondrian conformal
    prediction: the band is calibrated within the class the run falls in, decided before the run by the same
    :func:`condition` that classed the pairs; ``machine``: the whole machine's busy CPUs), the line that says which,
    and whether they match; where fewer than :func:`enough_pairs` match, every pair, said so (the band then has no
    tested coverage, and the lines call it a reference band). The references are one machine (the book's build VM): on
    another machine the band is the build VM's, which the line cannot know.

    >>> from hetlab.book import reference
    >>> refs = [reference.load(n) for n in ("build-vm-idle", "build-vm", "build-vm-one-cpu")]
    >>> pairs, line, matched = matching_pairs(refs, 2, 0.0, 2)
    >>> len(pairs) >= 19, matched, line.split("：")[1].split("下记录")[0]
    (True, True, '区间用本书构建机在同类情形（空闲，P = 2）')
    """
    workers = check_int("workers", workers, low=1, high=4096)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    every = reference_pairs(reference)          # refuses references with no pairs
    refs = [r for r in _refs(reference) if r.dag and "pairs" in r.dag]
    kind = condition(cpus, busy, machine)
    seen = "读不出其他程序占着几个 CPU" if busy is None else f"其他程序占着 {busy:.1f} 个 CPU（本机 {cpus} 个可用）"
    if busy is not None and busy >= cpus - 0.1:
        seen += "，CPU 都被占满，看不出还有几个线程在等核"
    if cpus == 1 and machine is not None and machine >= IDLE_BELOW:
        seen += f"，整台机器上其他程序占着 {machine:.1f} 个 CPU（运行中可能挪到这个 CPU 上）"
    pairs = [pair for r in refs if r.dag["workers"] == workers for k, pair in _stored_pairs(r) if k == kind]
    pairs = steady(pairs) if len(pairs) >= 9 else pairs     # disturbed calibrations out, as for the reader's pair
    if kind is not None and len(pairs) >= enough_pairs():
        # the class is what the CPU readings see; the VM's host they do not (review A1-24 #1): said on every line
        what = "忙碌：另有两个进程占满两个 CPU" if kind == "busy" else CONDITIONS[kind]
        line = (f"运行前{seen}：区间用本书构建机在同类情形（{what}，P = {workers}）下记录的 {len(pairs)} 对（别的机器上"
                "没有检验过；宿主机上的干扰本机读不到，时段不同，覆盖率也会不同）")
        return pairs, line, True
    every = steady(every)       # the same rule as for the matched classes: a disturbed calibration does not count
    return every, (f"运行前{seen}，P = {workers}：参照里没有与此相仿的情形（参照都是本书构建机、P = 2，只录了"
                   "空闲、两个核都被占满和只用 1 个 CPU 且整台机器空闲三种情形），只能借用它们合在一起的比值给一个"
                   "参考区间，覆盖率没有检验过"), False


def reference_pairs(reference) -> list[tuple[float, float]]:
    """The (predicted, measured) extra seconds of every (calibration, run) pair the stored machines keep
    (``reference``: one :class:`~hetlab.book.reference.Reference` or several; ``tools/record_reference.py``
    records them with ``--a1-4``), pooled: the machines' conditions (idle, busy, one CPU) all inform the band."""
    if reference is None:
        raise TypeError("reference must be a Reference or several, got None")
    pairs = [pair for ref in _refs(reference) if ref.dag and "pairs" in ref.dag for _, pair in _stored_pairs(ref)]
    if not pairs:
        raise ValueError("reference holds no A1.4 (calibration, run) pairs: record them with "
                         "tools/record_reference.py --a1-4")
    return pairs


#: A pair's calibration counts as disturbed when its prediction is more than this factor above the median prediction
#: of the pairs it is compared with (:func:`steady`; review A1-25 #2): a stall only adds time, and in the stored
#: idle pairs every ratio below 0.7 had a prediction 1.7-3.2 times the usual one. The same rule drops such pairs
#: from the band and disqualifies the reader's own pair before its run
#: (:func:`hetlab.book.readings.a1_dag.calibration_disturbed`).
DISTURBED = 2.0


def steady(pairs, against=None) -> list:
    """The ``pairs`` whose prediction is at most :data:`DISTURBED` times the median prediction of ``against``
    (default: of ``pairs`` themselves; either way at least 9 pairs, as for :func:`error_band`), in their order.

    >>> pairs = [(1.0, 1.0), (1.1, 0.9), (0.9, 1.2)] * 3 + [(3.0, 1.0)]     # median prediction 1.0
    >>> len(steady(pairs)), steady(pairs)[-1], steady([(2.5, 1.0), (1.5, 1.0)], against=pairs)
    (9, (0.9, 1.2), [(1.5, 1.0)])
    """
    rows = _pairs(pairs, least=9 if against is None else 0)
    median = _typical_prediction(pairs if against is None else against, "pairs" if against is None else "against")
    return [pair for pair, row in zip(pairs, rows) if row[0] <= DISTURBED * median]


def _typical_prediction(pairs, name: str = "pairs") -> float:
    """The median predicted extra seconds of ``pairs`` (at least 9): what :data:`DISTURBED` multiplies, for the
    stored pairs (:func:`steady`) and the reader's (:func:`hetlab.book.readings.a1_dag.calibration_disturbed`)."""
    return float(np.median(_pairs(pairs, name)[:, 0]))


#: What a machine with no other program reads over a whole (calibration, run) pair (:func:`stayed`): up to 0.27
#: CPUs on the build VM (the kernel's work for the pools' own processes and the jiffy accounting, which
#: ``others_since`` cannot subtract), against 0.05 in the 0.2 s sample taken before a pair.
DURING_NOISE = 0.3


def stayed(kind: str, cpus: int, during: float) -> bool:
    """Whether a pair classed ``kind`` before its calibration (:func:`condition`) was still in that condition over
    the whole pair, read as ``during`` busy CPUs of other programs (:func:`hetlab.real.cpu_load.others_since`),
    allowing :data:`DURING_NOISE` for what that reading counts on a quiet machine: a quiet condition is left when
    other programs used at least ``IDLE_BELOW + DURING_NOISE`` CPUs, a busy one when they fell below
    ``cpus - FULL_WITHIN - DURING_NOISE``. ``tools/record_reference.py`` keeps stored pairs by the same rule since
    12:00 UTC 2026-12-05 (the one-CPU reference and the idle one's 12:38 batch); earlier pairs carry only the
    reading before them. The allowance means a pair through which another program used up to 0.49 CPUs still
    counts as idle: what the rule can tell apart from a quiet machine's reading is a program running most of a pair.

    >>> stayed("idle", 2, 0.27), stayed("idle", 2, 0.6), stayed("busy", 2, 1.7), stayed("busy", 2, 0.3)
    (True, False, True, False)
    """
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a condition name (str), got {type(kind).__name__} {kind!r}")
    if kind not in CONDITIONS:
        raise ValueError(f"kind must be one of {sorted(CONDITIONS)}, got {kind!r}")
    cpus = check_int("cpus", cpus, low=1, high=4096)
    during = check_nonnegative("during", during, high=4096.0)
    if kind == "busy":
        return during >= cpus - FULL_WITHIN - DURING_NOISE
    return during < IDLE_BELOW + DURING_NOISE


def left_condition(cpus: int, busy: float | None, machine: float | None, during: float | None) -> str:
    """After the run: the line that says the pair left the condition it was classed in before the calibration
    (:func:`stayed`), or "" where it stayed (or where that cannot be told). ``during``: the CPUs other programs
    kept busy over calibration and run (:func:`hetlab.real.cpu_load.others_since`; pinned to one CPU, the whole
    machine's). The stored pairs recorded with this reading were kept only where they stayed (see :func:`stayed`),
    so a reader's pair that left is not one the band was calibrated on: its comparison tests nothing, and the line
    says so.

    >>> left_condition(2, 0.0, 0.0, 0.25), left_condition(2, 0.0, 0.0, None)
    ('', '')
    >>> left_condition(2, 0.0, 0.0, 0.9)
    '运行期间别的程序占用 0.9 个 CPU（运行前 0.0 个）：这一对已不在运行前的情形（空闲）里，这次比较检验不了模型'
    """
    cpus = check_int("cpus", cpus, low=1, high=4096)
    if during is None or busy is None:
        return ""
    during = check_nonnegative("during", during, high=4096.0)
    before = condition(cpus, busy, machine)
    if before is None or stayed(before, cpus, during):
        return ""
    return (f"运行期间别的程序占用 {during:.1f} 个 CPU（运行前 {busy:.1f} 个）：这一对已不在运行前的情形"
            f"（{CONDITIONS[before]}）里，这次比较检验不了模型")
