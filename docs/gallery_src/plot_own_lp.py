"""
Your own model: a production plan read from an MPS file
=======================================================

Any linear or mixed-integer program with known constraints and an uncertain
linear objective can be the decision problem of a tree. Modeling tools write
such models as MPS or LP files (PuLP's ``writeMPS``, Pyomo's ``model.write``,
gurobipy's ``Model.write``, HiGHS's ``writeModel``, JuMP's ``write_to_file``);
:meth:`LinearProgram.from_file <spotree.problems.LinearProgram.from_file>`
reads them.

Here a workshop plans tomorrow's production of four products. Wood and
labour are limited and each product has a market cap; the profit per unit of
each product is not known in advance but depends on four features observed
the day before.
"""

# %%
# The model file
# --------------
# The objective row in the file is ignored (spotree supplies the profits);
# the constraints, the bounds and the objective sense (``MAX``) are read, and
# the order of the columns is the order of the cost vectors.
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np

from spotree import SPOTree, export_text
from spotree.metrics import normalized_spo_loss
from spotree.plotting import plot_tree
from spotree.problems import LinearProgram

MPS = """\
NAME          WORKSHOP
OBJSENSE
    MAX
ROWS
 N  profit
 L  wood
 L  labour
COLUMNS
    chairs    profit    1
    chairs    wood      2
    chairs    labour    1
    tables    profit    1
    tables    wood      5
    tables    labour    3
    shelves   profit    1
    shelves   wood      3
    shelves   labour    1
    desks     profit    1
    desks     wood      4
    desks     labour    4
RHS
    RHS       wood      120
    RHS       labour    60
BOUNDS
 UP BND       chairs    30
 UP BND       tables    15
 UP BND       shelves   25
 UP BND       desks     10
ENDATA
"""

folder = tempfile.mkdtemp()
path = os.path.join(folder, "workshop.mps")
with open(path, "w") as fh:
    fh.write(MPS)

plan = LinearProgram.from_file(path)
print(plan, plan.variable_names)
print(len(plan.vertices()), "vertices")

# %%
# Profits that depend on features
# -------------------------------
# The unit profit of each product is a nonlinear function of the features
# (a demand index, a wood price index, a season indicator and a promotion
# level), with noise. The best plan changes with them.
rng = np.random.default_rng(0)


def make_profits(n):
    X = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n),
                         rng.integers(0, 2, n), rng.uniform(0, 1, n)])
    demand, wood_price, season, promotion = X.T
    profit = np.column_stack([
        3.0 + 2.0 * demand - 1.0 * wood_price,               # chairs
        4.0 + 8.0 * demand ** 2 - 3.0 * wood_price,          # tables
        2.5 + 3.0 * season - 1.5 * wood_price,               # shelves
        3.0 + 7.0 * promotion * demand - 2.0 * wood_price,   # desks
    ])
    return X, profit * rng.uniform(0.8, 1.2, profit.shape)


X, C = make_profits(600)
X_test, C_test = make_profits(2000)
W, z = plan.solve(C[:3])
print("best plans of the first three days:\n", W.round(2), "\nprofits", z.round(1))

# %%
# SPOT and CART
# -------------
# 480 rows grow each tree, 120 prune it.
features = ["demand", "wood_price", "season", "promotion"]
for criterion in ("spo", "mse"):
    tree = SPOTree(plan, criterion=criterion, max_depth=3, min_samples_leaf=20)
    tree = tree.fit(X[120:], C[120:]).prune(X[:120], C[:120])
    loss = normalized_spo_loss(C_test, tree.predict(X_test), problem=plan)
    print(f"{criterion}: {tree.get_n_leaves()} leaves, profit lost to prediction "
          f"{100 * loss:.2f}% of the best achievable")
    if criterion == "spo":
        spot = tree

# %%
# The SPO tree, with each leaf's plan (quantities of the products, in the
# file's column order):
print(export_text(spot, feature_names=features, decimals=2))
fig, ax = plt.subplots(figsize=(9, 5))
plot_tree(spot, ax=ax, feature_names=features, fontsize=7)
