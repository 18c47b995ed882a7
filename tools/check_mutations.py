"""Apply hand-made mutations to spotree, one at a time, and check the tests catch each.

Each mutation is a one-place edit that a plausible bug would make (issue 9 lists
the ones the suite used to miss). For each, the script copies the committed tree
(``git archive HEAD``) to a temporary folder, applies the edit, runs the named
test files there and expects at least one failure. It prints one line per
mutation and exits 1 if any mutation survives (every test passed) or any edit
no longer applies (the code moved: update the mutation).

Run: ``python tools/check_mutations.py [--only NAME ...] [--fast | --quick] [--without PKG ...]
[--list]``. ``--quick`` is the subset CI runs (.ci/run): the mutations outside
the compiled kernels, each against only the tests that catch it.
Mutations of the compiled kernels recompile them (a minute or more each);
``--fast`` leaves those out. ``--without pyepo torch`` hides installed
packages from the tests (an import of them fails), so that the run sees what
CI sees where they are not installed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# name: (file, old text, new text, test paths, why it matters)
MUTATIONS = {
    "max_features_ignored": (
        "spotree/tree/_kernels.py",
        "if st.max_features > 0 and st.max_features < p:\n                sc.rng[1] = sc.rng[0]",
        "if False and st.max_features > 0 and st.max_features < p:\n                sc.rng[1] = sc.rng[0]",
        ["tests/tree/test_contracts.py", "tests/test_forest.py"],
        "every feature searched whatever max_features says"),
    "one_feature_per_node": (
        "spotree/tree/_kernels.py",
        "                nf = st.max_features\n",
        "                nf = 1\n",
        ["tests/tree/test_contracts.py", "tests/test_forest.py"],
        "a single feature drawn per node"),
    "route_missing_side_flipped": (
        "spotree/tree/_kernels.py",
        "go_left = nan_left[t] != 0",
        "go_left = nan_left[t] == 0",
        ["tests/tree/test_tree.py"],
        "compiled routing sends missing values to the other child"),
    "route_categories_ignored": (
        "spotree/tree/_kernels.py",
        "elif cat_ptr[t + 1] > cat_ptr[t]:",
        "elif False:",
        ["tests/tree/test_tree.py"],
        "compiled routing compares category codes with the NaN threshold"),
    "bootstrap_never_last_row": (
        "spotree/forest.py",
        "rng.integers(0, n, n_draws)",
        "rng.integers(0, n - 1, n_draws)",
        ["tests/test_forest.py"],
        "the bootstrap never draws the last row"),
    "cart_pruning_validation_formula": (
        "spotree/tree/_classes.py",
        "mse = sq - 2 * np.einsum(",
        "mse = sq - np.einsum(",
        ["tests/tree/test_classes.py", "tests/tree/test_tree.py"],
        "CART pruning's validation squared error expanded wrongly"),
    "cart_one_se_rule_l1": (
        "spotree/tree/_classes.py",
        'mse = np.einsum("ij,ij->i", diff, diff)',
        "mse = np.abs(diff).sum(axis=1)",
        ["tests/tree/test_classes.py", "tests/tree/test_tree.py"],
        "the one-SE rule's per-row squared error replaced by the absolute error"),
    "mixed_scales_swapped_in_kernel": (
        "spotree/tree/_kernels.py",
        "return a * spo / spo_scale + (1.0 - a) * mse / mse_scale",
        "return a * spo / mse_scale + (1.0 - a) * mse / spo_scale",
        ["tests/tree/test_builder.py", "tests/tree/test_classes.py"],
        "the mixed criterion divides by the wrong root loss"),
    "mixed_scales_wrong_power": (
        "spotree/tree/_builder.py",
        "(spo_scale * su * w_unit * w_scale, mse_scale * su * su * w_unit * w_scale)",
        "(spo_scale * su * w_unit * w_scale, mse_scale * su * w_unit * w_scale)",
        ["tests/tree/test_classes.py", "tests/tree/test_tree.py",
         "tests/tree/test_contracts.py"],
        "the stored MSE scale is not undone by the square of the cost scaling"),
    "mixed_scales_swapped_in_pruning": (
        "spotree/tree/_classes.py",
        "return a * spo / s_spo + (1 - a) * mse / s_mse",
        "return a * spo / s_mse + (1 - a) * mse / s_spo",
        ["tests/tree/test_classes.py", "tests/tree/test_tree.py"],
        "pruning mixes validation losses with the wrong scales"),
    "prune_spo_uses_criterion": (
        "spotree/tree/_classes.py",
        'train = {"criterion": t.impurity, "spo": t.loss}.get(loss)',
        'train = {"criterion": t.impurity, "spo": t.impurity}.get(loss)',
        ["tests/tree/test_classes.py", "tests/tree/test_tree.py"],
        'prune(loss="spo") orders subtrees by the training criterion'),
    "loss_scales_not_saved": (
        "spotree/tree/_classes.py",
        '_persist_extra = ("loss_scales_", "loss_unit_", "pruning_alpha_",',
        '_persist_extra = ("loss_unit_", "pruning_alpha_",',
        ["tests/tree/test_persist.py"],
        "a saved mixed-criterion tree forgets its loss scales"),
    "decision_loss_abs": (
        "spotree/metrics.py",
        "regret = np.maximum(regret, 0.0)",
        "regret = np.abs(regret)",
        ["tests/test_metrics.py"],
        "a rounding-negative regret counted as a positive loss"),
    "forest_importances_count_leaves": (
        "spotree/forest.py",
        "used = [imp for imp, k in zip(per_tree, node_counts) if k > 1]",
        "used = [imp for imp, k in zip(per_tree, node_counts)]",
        ["tests/test_forest.py"],
        "single-leaf trees averaged into the importances (see the note: equivalent)"),
    # Issue 15's survivors.
    "boost_subsample_with_replacement": (
        "spotree/boost.py",
        "bag[weighed[rng.choice(n, n_bag, replace=False)]] = True",
        "bag[weighed[rng.choice(n, n_bag, replace=True)]] = True",
        ["tests/test_boost.py"],
        "SPOBoost's subsample drawn with replacement (fewer distinct rows)"),
    "missing_tie_goes_right": (
        "spotree/tree/_builder.py",
        "nan_left[unseen] = wn[left[unseen]] >= wn[right[unseen]]",
        "nan_left[unseen] = wn[left[unseen]] > wn[right[unseen]]",
        ["tests/tree/test_missing.py"],
        "missing values unseen at fit sent right when the children weigh the same"),
    "bounded_oracle_no_tie_margin": (
        "spotree/tree/_oracle.py",
        "        while k < n_cand and c_lo[order[k]] <= best + margin:",
        "        while k < n_cand and c_lo[order[k]] < best:",
        ["tests/tree/test_oracle.py"],
        "the bounded oracle leaves candidates that tie with the best unsolved"),
    "pyepo_arcs_sorted": (
        "spotree/problems/_pyepo.py",
        "[tuple(a) for a in model.arcs]",
        "sorted(tuple(a) for a in model.arcs)",
        ["tests/problems/test_pyepo.py"],
        "PyEPO's arcs reordered: cost columns no longer match the model's"),
    "pyepo_agreement_unchecked": (
        "spotree/problems/_pyepo.py",
        "if abs(obj - zi) > 1e-6 * (abs(obj) + np.abs(c).sum()):",
        "if False:",
        ["tests/problems/test_pyepo.py"],
        "spotree's own solver used even where it disagrees with the PyEPO model"),
    "centred_sweep_right_child_weighted": (
        "spotree/tree/_kernels.py",
        "crit = qcT - nl * (1.0 / wL + 1.0 / (T.w - wL))",
        "crit = qcT - nl * (1.0 / wL + 1.05 / (T.w - wL))",
        ["tests/tree/test_contracts.py"],
        "the centred squared-error sweep weighs the right child's term 5% too much"),
    "centred_sweep_mean_off": (
        "spotree/tree/_kernels.py",
        "v = Cm[i, j] - cur_S[j] * inv\n",
        "v = Cm[i, j] - cur_S[j] * inv * 0.999\n",
        ["tests/tree/test_contracts.py"],
        "the node's costs centred on a slightly wrong mean"),
    "solve_parts_not_stopped": (
        "spotree/problems/_compiled.py",
        "            stop.set()\n",
        "            pass\n",
        ["tests/problems/test_compiled.py"],
        "Ctrl-C in one part of a threaded batch leaves the others solving to the end"),
    "dag_basis_all_edges_usable": (
        "spotree/problems/_shortest_path.py",
        "usable = reached[self.tail] & reaches[self.head]",
        "usable = reaches[self.head]",
        ["tests/problems/test_shortest_path.py"],
        "a DAG's difference basis keeps circulations through edges off every path"),
    "knapsack_basis_every_item": (
        "spotree/problems/_knapsack.py",
        "return np.eye(self.n_costs)[:, usable]",
        "return np.eye(self.n_costs)",
        ["tests/problems/test_knapsack.py"],
        "a knapsack's difference basis counts items that never fit"),
    "boost_basis_values_not_mapped_back": (
        "spotree/boost.py",
        "t_.value = t_.value @ basis.T\n",
        "t_.value = np.pad(t_.value, ((0, 0), (0, basis.shape[0] - basis.shape[1])))\n",
        ["tests/test_boost.py"],
        "SPOBoost's trees keep their leaf values in the basis' coordinates"),
    "null_space_rank_off_by_one": (
        "spotree/problems/_base.py",
        "    return vt[rank:].T\n",
        "    return vt[rank + 1:].T\n",
        ["tests/problems/test_linear.py", "tests/problems/test_shortest_path.py"],
        "the null space loses a direction"),
    # Issue 16, stop 26: SPOForest's ridge features.
    "ridge_fill_unweighted": (
        "spotree/_ridge.py",
        "fill = np.divide((np.where(present, Xn[pos], 0.0) / unit * w).sum(axis=0), total,",
        "fill = np.divide((np.where(present, Xn[pos], 0.0) / unit * present).sum(axis=0), "
        "present.sum(axis=0),",
        ["tests/test_forest.py"],
        "a missing value filled with the unweighted mean of its column"),
    "ridge_importances_unscaled": (
        "spotree/_ridge.py",
        "mag = np.abs(coef * scale)",
        "mag = np.abs(coef)",
        ["tests/test_forest.py"],
        "a ridge column's importance shared by raw, not standardized, coefficients"),
    # Issue 16, stop 27: SPOForest(criterion="auto").
    "auto_criterion_mse_on_ties": (
        "spotree/forest.py",
        'self.criterion_ = "mse" if scores[1] > scores[0] else "spo"',
        'self.criterion_ = "mse" if scores[1] >= scores[0] else "spo"',
        ["tests/test_forest.py"],
        "criterion='auto' keeps the squared-error forest on a tie"),
    "auto_criterion_on_whole_forests": (
        "spotree/forest.py",
        "k = _auto_pilot_trees(len(seeds))",
        "k = len(seeds)",
        ["tests/test_forest.py"],
        "criterion='auto' chooses on whole forests instead of on the first trees"),
    "highs_small_rows_bounds_unscaled": (
        "spotree/problems/_highs.py",
        "return A, lower * factor, upper * factor",
        "return A, lower, upper",
        ["tests/problems/test_linear.py"],
        "rows of tiny coefficients are scaled for HiGHS but their bounds are not"),
}

# For --quick (the CI subset): the tests that catch each mutation, by node id,
# instead of whole files. Kept in step by running the full check: a mutation
# whose quick tests miss it is reported like any survivor.
QUICK = {
    "bootstrap_never_last_row": [
        "tests/test_forest.py::test_bootstrap_draws_rows_uniformly_with_replacement"],
    "cart_pruning_validation_formula": [
        "tests/tree/test_classes.py::test_every_pruning_mode_against_brute_force"],
    "cart_one_se_rule_l1": [
        "tests/tree/test_classes.py::test_every_pruning_mode_against_brute_force"],
    "mixed_scales_wrong_power": [
        "tests/tree/test_classes.py::test_every_pruning_mode_against_brute_force"],
    "mixed_scales_swapped_in_pruning": [
        "tests/tree/test_classes.py::test_every_pruning_mode_against_brute_force"],
    "prune_spo_uses_criterion": [
        "tests/tree/test_classes.py::test_every_pruning_mode_against_brute_force"],
    "loss_scales_not_saved": [
        "tests/tree/test_persist.py::test_a_loaded_mixed_criterion_tree_prunes_as_the_original"],
    "decision_loss_abs": [
        "tests/test_metrics.py::test_decision_loss_treats_rounding_level_negatives_as_zero"],
    "boost_subsample_with_replacement": [
        "tests/test_boost.py::test_subsample_trains_each_tree_on_that_many_distinct_rows"],
    "missing_tie_goes_right": [
        "tests/tree/test_missing.py::"
        "test_missing_at_predict_goes_left_when_the_children_weigh_the_same"],
    "bounded_oracle_no_tie_margin": [
        "tests/tree/test_oracle.py::test_bounded_oracle_solves_candidates_that_tie_with_the_best"],
    "pyepo_arcs_sorted": [
        "tests/problems/test_pyepo.py::test_shortest_path_values_equal_pyepo"],
    "pyepo_agreement_unchecked": [
        "tests/problems/test_pyepo.py::"
        "test_disagreeing_native_solver_falls_back_with_a_warning"],
    "dag_basis_all_edges_usable": [
        "tests/problems/test_shortest_path.py::"
        "test_dag_difference_basis_spans_exactly_the_path_differences"],
    "knapsack_basis_every_item": [
        "tests/problems/test_knapsack.py::"
        "test_difference_basis_spans_exactly_the_differences_of_feasible_subsets"],
    "boost_basis_values_not_mapped_back": [
        "tests/test_boost.py::test_spo_plus_rounds_in_the_difference_basis_grow_the_same_model"],
    "ridge_fill_unweighted": [
        "tests/test_forest.py::"
        "test_ridge_features_are_each_costs_ridge_prediction_from_the_numeric_features"],
    "ridge_importances_unscaled": [
        "tests/test_forest.py::"
        "test_ridge_feature_importances_are_shared_by_standardized_coefficients"],
    "auto_criterion_mse_on_ties": [
        "tests/test_forest.py::test_auto_criterion_keeps_the_spo_forest_on_a_tie"],
    "auto_criterion_on_whole_forests": [
        "tests/test_forest.py::"
        "test_auto_criterion_chooses_on_the_first_trees_and_grows_the_rest_alike"],
    "highs_small_rows_bounds_unscaled": [
        "tests/problems/test_linear.py::test_rows_of_tiny_coefficients_are_kept"],
    "null_space_rank_off_by_one": [
        "tests/problems/test_linear.py::test_difference_basis_is_the_null_space_of_a_eq",
        "tests/problems/test_shortest_path.py::"
        "test_grid_difference_basis_spans_exactly_the_path_differences"],
}

# Mutations that change nothing observable; listed so that a change that makes
# them observable is noticed. Each with the reason.
EQUIVALENT = {
    "forest_importances_count_leaves":
        "a single-leaf tree's importances are all zero, and the mean over trees is "
        "renormalized to sum to 1, so averaging in zero vectors scales every entry "
        "by the same factor that the renormalization removes",
}


# Files whose mutation recompiles the numba kernels: left out by --fast.
COMPILED = ("spotree/tree/_kernels.py", "spotree/tree/_optimal_kernels.py",
            "spotree/problems/_compiled.py", "spotree/problems/_certificate_kernels.py")


def copy_tree(workdir):
    """The committed tree (``git archive HEAD``), or the project's files outside git."""
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True)
    if archive.returncode == 0:
        subprocess.run(["tar", "-x", "-C", str(workdir)], input=archive.stdout, check=True)
        return
    import shutil  # a checkout without .git (a CI tarball): copy what the tests need

    for name in ("spotree", "tests", "examples", "tools", "docs", "benchmarks"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, workdir / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, workdir / name)


def hide(workdir, packages):
    """Make ``import PKG`` fail in the test runs, as for a package not installed."""
    shadow = workdir / "_hidden"
    shadow.mkdir(exist_ok=True)
    for pkg in packages:
        (shadow / f"{pkg}.py").write_text(
            f"raise ModuleNotFoundError('{pkg} hidden by check_mutations --without', "
            f"name='{pkg}')\n")
    return shadow


def run(name, workdir, python, extra_path=(), quick=False):
    path, old, new, tests, _ = MUTATIONS[name]
    if quick:
        tests = QUICK[name]
    target = workdir / path
    text = target.read_text()
    if text.count(old) != 1:
        return "STALE", f"the text to mutate occurs {text.count(old)} times in {path}"
    target.write_text(text.replace(old, new))
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, extra_path),
                                                          str(workdir)]))
        t0 = time.perf_counter()
        res = subprocess.run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", "-x", "-q", *tests],
            cwd=workdir, env=env, capture_output=True, text=True)
        took = time.perf_counter() - t0
    finally:
        target.write_text(text)
    last = (res.stdout.strip().splitlines() or [""])[-1]
    if res.returncode == 0:
        return "SURVIVED", f"{took:.0f}s: {last}"
    if res.returncode != 1:  # collection error, missing file, ...: not a catch
        return "ERROR", f"pytest exit {res.returncode}: {last} {res.stderr[-300:]}"
    failed = [ln for ln in res.stdout.splitlines() if ln.startswith("FAILED")]
    return "caught", f"{took:.0f}s: {failed[0] if failed else last}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(MUTATIONS))
    ap.add_argument("--fast", action="store_true",
                    help="leave out the mutations of the compiled kernels")
    ap.add_argument("--without", nargs="+", default=[], metavar="PKG",
                    help="packages to hide from the tests")
    ap.add_argument("--quick", action="store_true",
                    help="the CI subset: the mutations listed in QUICK (none of the compiled "
                         "kernels), each against the tests that catch it")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for name, (path, *_, why) in MUTATIONS.items():
            print(f"{name:34s} {path:28s} {why}")
        return 0
    missing = set(QUICK) - set(MUTATIONS) | {n for n in QUICK if MUTATIONS[n][0] in COMPILED}
    assert not missing, f"QUICK lists unknown or compiled mutations: {sorted(missing)}"
    names = args.only or list(MUTATIONS)
    if args.fast:
        names = [n for n in names if MUTATIONS[n][0] not in COMPILED]
    if args.quick:
        names = [n for n in names if n in QUICK]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="spotree-mut-") as tmp:
        workdir = pathlib.Path(tmp)
        copy_tree(workdir)
        extra = [hide(workdir, args.without)] if args.without else []
        for name in names:
            verdict, detail = run(name, workdir, sys.executable, extra, args.quick)
            if name in EQUIVALENT and verdict == "SURVIVED":
                verdict, detail = "equivalent", EQUIVALENT[name]
            elif verdict != "caught":
                bad += 1
            print(f"{name:34s} {verdict:10s} {detail}", flush=True)
    print("every mutation caught" if not bad else f"{bad} mutation(s) not caught")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
