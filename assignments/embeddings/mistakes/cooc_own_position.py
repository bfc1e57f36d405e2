"""cooccurrence counts the word's own position

Your counts include each word as its own neighbour: the diagonal C[w, w] is too large by the number of times
w occurs. A word is not part of its own context: for the word at position i, count only positions j != i with
|i - j| <= window (a repeated word at ANOTHER position still counts).
"""
CAUGHT_BY = [
    "hidden/test_cooccurrence.py::test_course_counts",
    "hidden/test_cooccurrence.py::test_edge_cases",
    "hidden/test_cooccurrence.py::test_random_corpora",
    "hidden/test_cooccurrence.py::test_sentence_boundaries",
    "public/test_embeddings_public.py::test_cooccurrence_example",
    "public/test_embeddings_public.py::test_course_results",
]
PATCH = [('index = word_index(vocab)\nC = np.zeros((len(vocab), len(vocab)))\n',
  'index = {w: i for i, w in enumerate(vocab)}\nC = np.zeros((len(vocab), len(vocab)))\n'),
 ('ids = [index[word] for word in sentence]\n'
  'for i, w in enumerate(ids):\n'
  '    lo, hi = max(0, i - window), min(len(ids), i + window + 1)\n'
  '    for j in range(lo, hi):\n'
  '        if j != i:\n'
  '            C[w, ids[j]] += 1\n',
  'for i, w in enumerate(sentence):\n'
  '    for j in range(max(0, i - window), min(len(sentence), i + window + 1)):\n'
  '        C[index[w], index[sentence[j]]] += 1\n')]
