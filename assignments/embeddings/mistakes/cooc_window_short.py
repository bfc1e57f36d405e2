"""cooccurrence window one position too short

Your window stops one word early (window - 1 on each side), the off-by-one of range(i - window + 1, i + window).
A window of 6 means the 6 words before and the 6 words after: range(i - window, i + window + 1), minus i itself.
"""
CAUGHT_BY = [
    "hidden/test_cooccurrence.py::test_course_counts",
    "hidden/test_cooccurrence.py::test_edge_cases",
    "hidden/test_cooccurrence.py::test_random_corpora",
    "public/test_embeddings_public.py::test_cooccurrence_example",
    "public/test_embeddings_public.py::test_course_results",
]
PATCH = [('index = word_index(vocab)\nC = np.zeros((len(vocab), len(vocab)))\n',
  'index = {w: i for i, w in enumerate(vocab)}\nC = np.zeros((len(vocab), len(vocab)))\n'),
 ('ids = [index[word] for word in sentence]\n'
  'for i, w in enumerate(ids):\n'
  '    lo, hi = max(0, i - window), min(len(ids), i + window + 1)\n'
  '    for j in range(lo, hi):\n',
  'for i, w in enumerate(sentence):\n'
  '    for j in range(max(0, i - window + 1), min(len(sentence), i + window)):\n'),
 ('C[w, ids[j]] += 1\n', 'C[index[w], index[sentence[j]]] += 1\n')]
