"""Routers, one per resource; each route validates, calls one MindBank method and shapes the response."""
