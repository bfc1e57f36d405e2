"""cooccurrence runs across sentence boundaries

Your counts treat the corpus as one long stream, so the end of one sentence becomes the context of the start
of the next. Co-occurrence is counted inside each sentence only: loop over the sentences and clip the window
to the current sentence.
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
  'index = {w: i for i, w in enumerate(vocab)}\n'
  'stream = [w for sentence in corpus for w in sentence]\n'
  'C = np.zeros((len(vocab), len(vocab)))\n'),
 ('for sentence in corpus:\n'
  '    ids = [index[word] for word in sentence]\n'
  '    for i, w in enumerate(ids):\n'
  '        lo, hi = max(0, i - window), min(len(ids), i + window + 1)\n'
  '        for j in range(lo, hi):\n'
  '            if j != i:\n'
  '                C[w, ids[j]] += 1\n',
  'for i, w in enumerate(stream):\n'
  '    for j in range(max(0, i - window), min(len(stream), i + window + 1)):\n'
  '        if j != i:\n'
  '            C[index[w], index[stream[j]]] += 1\n')]
