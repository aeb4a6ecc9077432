"""The Chinese edition's machinery: catalogues kept in step with the English, the book written.

The runtime half — ``_``, ``N_``, :func:`course_attention.i18n.set_language`, the shipped package
catalogues and the translation of the English run's outputs (:mod:`course_attention.i18n.outputs`)
— is in the course package; this half only builds the book:

* :mod:`.units`: a MyST text cut into translatable units, and rebuilt from their translations;
* :mod:`.catalog`: one gettext catalogue per document of ``chapters/``
  (``locales/zh_CN/LC_MESSAGES/<doc>.po``), fuzzy on change, and the translated notebooks;
* :mod:`.comments`: the code cells' comments, one catalogue per chapter
  (``locales/zh_CN/LC_MESSAGES/comments/<doc>.po``), translated with the code untouched;
* :mod:`.package`: the package's marked strings found with ``ast`` and merged into its catalogues
  (``src/course_attention/locales/zh_CN/LC_MESSAGES/package/<module>.po``);
* :mod:`.edition`: ``zh/`` written from ``chapters/``, the catalogues and the English execution;
* :mod:`.terms`: the glossary as the edition's terminology;
* :mod:`.words`: the reader editions' own phrases, per language;
* :mod:`.labels`: the labels of the package's controls, and the prose that names them;
* :mod:`.typography`: the Chinese catalogues' typography, checked and repaired
  (``scripts/typography.py``).

``python -m course_book.i18n update|check|write|package``: see :mod:`.__main__`.
"""
