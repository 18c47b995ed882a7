"""
News recommendation: a linear program with sample weights
=========================================================

The paper's second experiment (section 5.2) on synthetic data shaped like the
Yahoo! front-page click log (:func:`~spotree.datasets.make_news`; the real log
is licensed, see :doc:`/user_guide/reproducing`). Each row is a cluster of
users: ``x`` holds their 5 mean user features, ``c`` their click rates on 6
article types, and the sample weight their number of page views.

The decision ``w`` is how often to show each article type: a probability
vector that satisfies 5 random diversity constraints ``a_m^T w <= 1``, chosen
to **maximize** the expected click rate ``c^T w``
(:func:`~spotree.problems.news_recommendation`).
"""

# %%
# Data and problem
# ----------------
import matplotlib.pyplot as plt
import numpy as np

from spotree import SPOTree
from spotree.datasets import make_news
from spotree.metrics import normalized_spo_loss
from spotree.plotting import plot_by_depth
from spotree.problems import news_recommendation

X, C, weight = make_news(4000, random_state=0)
train, val, test = np.split(np.arange(4000), [2000, 3000])
print("features", X.shape, "click rates", C.shape,
      "page views per row from", int(weight.min()), "to", int(weight.max()))

problem = news_recommendation(random_state=0)
print(problem, "with", len(problem.vertices()), "vertices")

# %%
# The problem is a :class:`~spotree.LinearProgram` whose vertices spotree
# lists once; the split search then scores every candidate split from sums of
# ``C V^T`` without calling HiGHS.
#
# Leaf size by weight
# -------------------
# The paper asks for at least 10,000 page views per leaf. ``min_samples_leaf``
# counts rows whatever their weights; a minimum *weight* per leaf is set with
# ``min_weight_fraction_leaf``, a fraction of the total training weight.
min_views = 10000 / weight[train].sum()


def fit(problem, criterion, depth):
    tree = SPOTree(problem, criterion=criterion, max_depth=depth,
                   min_weight_fraction_leaf=min_views)
    tree = tree.fit(X[train], C[train], sample_weight=weight[train])
    return tree.prune(X[val], C[val], sample_weight=weight[val])


tree = fit(problem, "spo", 4)
W = tree.predict_decision(X[test])
_, z = problem.solve(C[test])
clicks = np.average(np.einsum("ij,ij->i", C[test], W), weights=weight[test])
best = np.average(z, weights=weight[test])
print(f"SPOT, depth 4, {tree.get_n_leaves()} leaves: click rate {clicks:.4f} "
      f"against {best:.4f} with hindsight")

# %%
# The normalized SPO loss of a maximization problem is the click rate lost to
# imperfect predictions, as a fraction of the best achievable click rate.
#
# Three constraint sets, several depths
# -------------------------------------
rows = []
for constraint_set in range(3):
    problem = news_recommendation(random_state=constraint_set)
    for depth in (2, 4, 6, None):
        for method, criterion in (("SPOT", "spo"), ("CART", "mse")):
            tree = fit(problem, criterion, depth)
            loss = normalized_spo_loss(C[test], tree.predict(X[test]), problem=problem,
                                       sample_weight=weight[test])
            rows.append({"method": method, "depth": depth, "normalized_spo_loss": loss,
                         "leaves": tree.get_n_leaves()})

fig, ax = plt.subplots(figsize=(6, 4))
plot_by_depth(rows, ax=ax, ylabel="normalized SPO loss (lost clicks)",
              title="news recommendation, 3 constraint sets")
fig.tight_layout()

for method in ("SPOT", "CART"):
    sel = [r for r in rows if r["method"] == method]
    print(f"{method}: mean normalized SPO loss "
          f"{np.mean([r['normalized_spo_loss'] for r in sel]):.4f}, "
          f"mean leaves {np.mean([r['leaves'] for r in sel]):.1f}")
