"""Chapter 4 (granularity): the derivation of N* with Chinese step labels, and the readings of the U-curve
measured on this machine (:func:`hetlab.real.experiments.u_curve_sweep`) against the prediction written
before the run and against the fit of exercise 4.2.

:func:`load_note` says whether the machine was busy while a measurement ran: a busy shared machine makes
every timing slower and noisier, so the chapter prints the load next to the numbers.
"""
from __future__ import annotations

import dataclasses
import math

from hetlab._validate import check_instance, check_int, check_nonnegative, check_positive
from hetlab.book.reference import Reference
from hetlab.formulas import GranularityDerivation, derive_optimal_tasks, total_time
from hetlab.real.experiments import SweepReading

__all__ = ["BUSY", "load_note", "derivation", "u_sweep_lines", "fit_lines"]

#: Runnable processes per CPU (:func:`hetlab.real.measure.load_per_cpu`) above which a timing is flagged as
#: taken on a busy machine.
BUSY = 0.5
#: How far apart (a factor) two estimates of the best task count may be and still be read as "the same
#: valley": the U-curve is flat at its bottom, T(2 N*) is only 25% above T(N*).
NEAR = 2.0


def load_note(load: float | None = None) -> str:
    """One sentence on the machine's load, in runnable processes per CPU (``None``: the system reports none).

    >>> load_note(0.1)
    '测量时机器基本空闲（每个 CPU 平均 0.10 个可运行进程）。'
    """
    if load is None:
        return "（本系统不报告负载，无法判断机器是否空闲。）"
    lo = check_nonnegative("load", load, high=1e6)
    if lo > BUSY:
        return (f"注意：测量时每个 CPU 平均有 {lo:.2f} 个可运行进程，机器在忙别的事，"
                "这次的数字会偏慢、偏乱；在空闲时重跑一次再下结论。")
    return f"测量时机器基本空闲（每个 CPU 平均 {lo:.2f} 个可运行进程）。"


def derivation() -> GranularityDerivation:
    """:func:`hetlab.formulas.derive_optimal_tasks` with its step labels in Chinese.

    >>> [label for label, _ in derivation().steps][:2]
    ['总耗时', '对 N 求一阶导数']
    """
    d = derive_optimal_tasks()
    labels = ["总耗时", "对 N 求一阶导数", "令导数为零，解出", "二阶导数",
              "在 N* 处为正，所以 N* 是极小值点", "最小总耗时"]
    if len(labels) != len(d.steps):
        raise RuntimeError(f"expected {len(labels)} derivation steps, got {len(d.steps)}")
    return dataclasses.replace(d, steps=[(zh, expr) for zh, (_, expr) in zip(labels, d.steps)])


def _apart(a: float, b: float) -> float:
    return max(a, b) / min(a, b)


def _best(sweep: SweepReading) -> int:
    return min(sweep.counts, key=sweep.at)


def _right_arm_slope(sweep: SweepReading) -> float | None:
    """The dispatch cost per extra task that the sweep itself shows (seconds): the slope of ``T(N) - W/N``
    from the fastest count to the largest one, where ``N Os`` dominates; ``None`` when the fastest count is
    the largest (no right arm was measured).

    >>> s = SweepReading(512, 0.05, (1, 32, 64, 512), (0.0503, 0.0030, 0.0028, 0.0165))
    >>> round(_right_arm_slope(s) * 1e6, 1)   # (16.5 - 0.0977 - 2.8 + 0.78125) ms / 448
    32.1
    """
    check_instance("sweep", sweep, SweepReading)
    best, last = _best(sweep), sweep.counts[-1]
    if best == last:
        return None
    w = sweep.total
    return ((sweep.at(last) - w / last) - (sweep.at(best) - w / best)) / (last - best)


def _verdict(n_star: float, gap: float, os_: float, arm: float | None) -> str:
    """The verdict on a calibrated N* against the measured valley: blame what the numbers show."""
    head = f"实测最快的 N 与预测的 N* = {n_star:.0f} 相差 {gap:.1f} 倍"
    if gap <= NEAR:
        return head + f"（不到 {NEAR:g} 倍）：谷底很平（N 差 2 倍，T 只多 25%），预测落在谷底之内。"
    if arm is not None and arm > 0 and _apart(os_, arm) > NEAR:
        if os_ > arm:
            return head + (f"：偏在标定，不在扫描。标定的 O_s 是右臂斜率的 {os_ / arm:.1f} 倍"
                           "（标定时机器更忙，或单次往返多付了主线程自己被唤醒的时间），所以预测的 N* 偏小。")
        return head + (f"：偏在标定，不在扫描。标定的 O_s 只有右臂斜率的 {os_ / arm:.2f}"
                       "（扫描时机器更忙，每张单比标定时贵），所以预测的 N* 偏大。")
    why = "标定与右臂的斜率相符，偏差来自" if arm is not None and arm > 0 else ""
    return head + (f"：{why}谷底很平，个别轮次被别的程序拖慢，谷底就会左右移动；"
                   "再跑一次，或看练习 4.2 的拟合。")


def u_sweep_lines(sweep: SweepReading, round_trip: float, reference=None) -> str:
    """The measured U-curve against the prediction ``N Os + W / N`` with ``Os = round_trip`` (seconds, the
    calibration written before the run): the fastest count and its time, both ends, the calibration beside
    the right arm's slope (:func:`_right_arm_slope`), and one verdict that blames the input the numbers show
    (a calibration more than 2x off the slope, else the flat valley); then the stored reading of
    ``reference`` (a :class:`hetlab.book.reference.Reference` with ``u_sweep``).

    >>> s = SweepReading(512, 0.05, (1, 32, 64, 512), (0.0503, 0.0030, 0.0028, 0.0165))
    >>> print(u_sweep_lines(s, 30e-6).splitlines()[-1])
    实测最快的 N 与预测的 N* = 41 相差 1.6 倍（不到 2 倍）：谷底很平（N 差 2 倍，T 只多 25%），预测落在谷底之内。
    """
    check_instance("sweep", sweep, SweepReading)
    os_ = check_positive("round_trip", round_trip, high=1.0)
    w, best = sweep.total, _best(sweep)
    n_star = math.sqrt(w / os_)
    last = sweep.counts[-1]
    arm = _right_arm_slope(sweep)
    lines = [f"实测：最快的是 N = {best}，T = {sweep.at(best) * 1e3:.2f} ms"
             f"（预测 N* = {n_star:.0f}，T = {total_time(n_star, w, os_) * 1e3:.2f} ms）；"
             f"N = {sweep.counts[0]} 时 {sweep.at(sweep.counts[0]) * 1e3:.1f} ms，"
             f"N = {last} 时 {sweep.at(last) * 1e3:.1f} ms（最快的 {sweep.at(last) / sweep.at(best):.1f} 倍）。"]
    if arm is not None:
        lines.append(f"标定的 O_s = {os_ * 1e6:.1f} µs；右臂的斜率（N = {best} 到 {last}，扣掉 W/N）"
                     f"= 每多一份 {arm * 1e6:.1f} µs。")
    lines.append(_verdict(n_star, _apart(best, n_star), os_, arm))
    if reference is not None:
        check_instance("reference", reference, Reference, "a stored Reference (hetlab.book.reference.load) or None")
    if reference is not None and reference.u_sweep is not None and reference.u_round_trip is not None:
        ref = reference.u_sweep
        lines.insert(1, f"参照（{reference.label}）：单次往返 O_s = {reference.u_round_trip * 1e6:.1f} µs，"
                        f"预测 N* = {math.sqrt(ref.total / reference.u_round_trip):.0f}，实测最快 N = {_best(ref)}。")
    return "\n".join(lines)


def fit_lines(predicted: float, fitted: float, best: int, os_fit: float, os_cal: float) -> str:
    """Exercise 4.2's three estimates of the best task count: ``predicted`` from the calibration ``os_cal``
    before the run, ``fitted`` from the fitted overhead ``os_fit`` (seconds), and ``best``, the fastest
    measured count; one verdict on the fit against the measured valley.

    >>> print(fit_lines(49.0, 43.0, 48, 27e-6, 21e-6))
    标定 N* = 49（O_s = 21.0 µs），拟合 N* = 43（O_s = 27.0 µs），实测最快 N = 48。
    拟合的 N* 与实测最快的 N 相差 1.1 倍（不到 2 倍）：拟合的 N* 落在实测的谷底之内，N·O_s + W/N 描述了这条实测曲线。
    """
    for name, value in (("predicted", predicted), ("fitted", fitted)):
        check_positive(name, value, high=1e9)
    best = check_int("best", best, low=1, high=10**9)
    o_fit = check_positive("os_fit", os_fit, high=1.0)
    o_cal = check_positive("os_cal", os_cal, high=1.0)
    head = (f"标定 N* = {predicted:.0f}（O_s = {o_cal * 1e6:.1f} µs），拟合 N* = {fitted:.0f}"
            f"（O_s = {o_fit * 1e6:.1f} µs），实测最快 N = {best}。")
    gap = _apart(fitted, best)
    if gap <= NEAR:
        return head + (f"\n拟合的 N* 与实测最快的 N 相差 {gap:.1f} 倍（不到 {NEAR:g} 倍）："
                       "拟合的 N* 落在实测的谷底之内，N·O_s + W/N 描述了这条实测曲线。")
    return head + (f"\n拟合的 N* 与实测最快的 N 相差 {gap:.1f} 倍：谷底很平，几轮被拖慢就能让最快的 N "
                   "左右移动；拟合用上了所有的点，比单看最快的一点更稳。")
