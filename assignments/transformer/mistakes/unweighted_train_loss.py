"""train_loss is the plain mean of the batch losses: a smaller last batch counts as much as a full one.

Each batch loss is already a mean over its rows, so averaging the batch means gives the rows of a
short last batch more weight. The epoch's training loss is the mean over its rows: sum
loss.item() * len(batch) and divide by the number of rows.
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_loss_weighted_by_batch_size"]
PATCH = [('total = 0.0\n', 'losses = []\n'),
 ('total += loss.item() * len(rows)\n', 'losses.append(loss.item())\n'),
 ('history["train_loss"].append(total / n_rows)\n',
  'history["train_loss"].append(sum(losses) / len(losses))\n')]
