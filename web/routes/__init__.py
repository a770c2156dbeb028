"""HTTP routes: the pages (:mod:`.pages`) and the JSON API (:mod:`.api`) over the same views."""
