"""cooccurrence looks only to the right of each word

Your counts only see the words AFTER each word, so C is not symmetric and every pair is counted once instead of
twice. The window reaches `window` positions on both sides: j from i - window to i + window (clipped to the
sentence), skipping i.
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
  '    for j in range(i + 1, min(len(sentence), i + window + 1)):\n'
  '        C[index[w], index[sentence[j]]] += 1\n')]
