"""
Your own network: routes on a graph, from a pandas DataFrame
============================================================

A delivery van leaves the depot (node 0) for a customer (node 5) through a
small road network. The network has no cycles, so
:meth:`ShortestPath.from_edges <spotree.problems.ShortestPath.from_edges>`
turns it into a decision problem, solved by compiled dynamic programming.

The features come as a :class:`pandas.DataFrame`: a ``weekday`` column of
dtype ``category``, the hour of departure and the rain of the last hour,
whose sensor sometimes fails (missing values). spotree takes both as they
are: category columns become categorical features, and missing values go to
whichever side of each split suits them best.
"""

# %%
# The network
# -----------
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from spotree import SPOTree, export_text
from spotree.metrics import normalized_spo_loss
from spotree.plotting import plot_tree
from spotree.problems import ShortestPath

edges = [(0, 1), (0, 2), (1, 3), (2, 3), (1, 4), (2, 4), (3, 5), (4, 5), (0, 4)]
roads = ShortestPath.from_edges(6, edges, source=0, target=5)
print(roads, "with", roads.n_paths(), "routes")
for path in roads.vertices():
    print(roads.describe_decision(path))

# %%
# Travel times
# ------------
# Off-peak, the route through the city (0->2->3->5) is the fastest. The
# morning rush on workdays slows the city streets, so the highway and the
# bridge (0->1->3->5) win then, unless it rains: rain slows the bridge, and
# the long but steady bypass (0->4->5) wins. The rain sensor fails on 15% of
# the days.
rng = np.random.default_rng(0)
days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def make_trips(n):
    weekday = rng.choice(days, n)
    hour = rng.uniform(6, 20, n)
    rain = rng.exponential(2.0, n) * (rng.random(n) < 0.5)
    workday = ~np.isin(weekday, ["Sat", "Sun"])
    rush = workday * np.exp(-(((hour - 8.5) / 1.5) ** 2))
    #                0->1 0->2 1->3 2->3 1->4 2->4 3->5 4->5 0->4
    base = np.array([6.0, 3.0, 3.0, 4.0, 5.0, 5.0, 3.0, 4.0, 10.0])
    C = np.tile(base, (n, 1))
    C[:, [1, 3, 5]] += 8.0 * rush[:, None]  # city streets in the rush hour
    C[:, 2] += 2.0 * rain                   # the bridge in the rain
    C *= rng.uniform(0.9, 1.1, C.shape)
    rain_seen = np.where(rng.random(n) < 0.15, np.nan, rain)
    X = pd.DataFrame({"weekday": pd.Categorical(weekday, categories=days),
                      "hour": hour, "rain": rain_seen})
    return X, C


X, C = make_trips(1000)
X_test, C_test = make_trips(2000)
print(X.head())

# %%
# One tree on the DataFrame
# -------------------------
# ``categorical_splits="subset"`` lets a split send any set of weekdays left.
tree = SPOTree(roads, max_depth=4, min_samples_leaf=20, categorical_splits="subset")
tree = tree.fit(X[200:], C[200:]).prune(X[:200], C[:200])
print(export_text(tree, decimals=1))

# %%
# Categorical splits show the weekdays by name; ``category_values_`` lists
# each column's labels in the order of their codes (None for numeric ones):
print(tree.category_values_)

# %%
# A weekday never seen at fit, or a missing rain reading, follows each
# split's missing-value side. Against CART on the same data:
cart = SPOTree(roads, criterion="mse", max_depth=4, min_samples_leaf=20,
               categorical_splits="subset")
cart = cart.fit(X[200:], C[200:]).prune(X[:200], C[:200])
for name, model in (("SPOT", tree), ("CART", cart)):
    loss = normalized_spo_loss(C_test, model.predict(X_test), problem=roads)
    print(f"{name}: {model.get_n_leaves()} leaves, extra travel time {100 * loss:.2f}%")

fig, ax = plt.subplots(figsize=(10, 5))
plot_tree(tree, ax=ax, fontsize=7)
