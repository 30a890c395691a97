"""``judgeflow dashboard``: the live review page over the result topics.

Layering: schemas <- streams <- agents <- dashboard. The pure core (:mod:`dashboard.window`,
:mod:`dashboard.rows`, :mod:`dashboard.excerpt`, :mod:`dashboard.stats`) imports neither
aiohttp nor aiokafka; the edges (:mod:`dashboard.feed`, :mod:`dashboard.web`,
:mod:`dashboard.server`) are thin.
"""
