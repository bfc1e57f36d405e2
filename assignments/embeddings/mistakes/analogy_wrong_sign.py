"""analogy computes E[a] - E[b] + E[c] (the signs of a and b swapped)

"a is to b as c is to ?" moves from a to b and applies the same move to c: E[b] - E[a] + E[c]. For
analogy(E, vocab, "man", "king", "woman") that is king - man + woman, which lands near queen; man - king + woman
lands among the commoners.
"""
CAUGHT_BY = [
    "hidden/test_analogy.py::test_course_analogy",
    "hidden/test_analogy.py::test_matches_reference",
    "public/test_embeddings_public.py::test_course_results",
]
PATCH = [('index = word_index(vocab)\nE = np.asarray(E, dtype=np.float64)\n',
  'index = {w: i for i, w in enumerate(vocab)}\nE = np.asarray(E, dtype=np.float64)\n'),
 ('target = E[index[b]] - E[index[a]] + E[index[c]]\n'
  'return nearest(E, vocab, target, n, exclude=(a, b, c))\n',
  'return nearest(E, vocab, E[index[a]] - E[index[b]] + E[index[c]], n, exclude=(a, b, c))\n')]
