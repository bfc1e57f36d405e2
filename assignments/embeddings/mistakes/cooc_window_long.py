"""cooccurrence window one position too long

Your window reaches window + 1 words on each side. A window of 6 means positions i - 6 ... i + 6 (without i):
range(i - window, i + window + 1); with window + 2 as the stop you see one word too many on the right, and
i - window - 1 one too many on the left.
"""
CAUGHT_BY = [
    "hidden/test_cooccurrence.py::test_course_counts",
    "hidden/test_cooccurrence.py::test_edge_cases",
    "hidden/test_cooccurrence.py::test_random_corpora",
    "public/test_embeddings_public.py::test_cooccurrence_example",
]
PATCH = [('index = word_index(vocab)\nC = np.zeros((len(vocab), len(vocab)))\n',
  'index = {w: i for i, w in enumerate(vocab)}\nC = np.zeros((len(vocab), len(vocab)))\n'),
 ('ids = [index[word] for word in sentence]\n'
  'for i, w in enumerate(ids):\n'
  '    lo, hi = max(0, i - window), min(len(ids), i + window + 1)\n'
  '    for j in range(lo, hi):\n',
  'for i, w in enumerate(sentence):\n'
  '    for j in range(max(0, i - window - 1), min(len(sentence), i + window + 2)):\n'),
 ('C[w, ids[j]] += 1\n', 'C[index[w], index[sentence[j]]] += 1\n')]
