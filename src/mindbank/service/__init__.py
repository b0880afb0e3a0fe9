"""The service layer: :class:`~mindbank.service.facade.MindBank`, the one facade (``facade.py``), which builds a tree
of resource services (``banks``, ``memories``, ``mental_models``, ``operations``, ``reflect``, ``transfer``,
``templates``, ...) and components (``governance``, ``jobs``, ``metrics``, ``events``) over one shared state
(``core.py``) and delegates to them. Nothing in this package imports the facade, this file included: callers import
it from ``mindbank.service.facade``."""
