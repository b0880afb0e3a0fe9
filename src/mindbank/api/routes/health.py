"""Probes and metrics for operators: ``GET /health/live`` (the process answers; no database read),
``GET /health/ready`` (200 when the database answers and its schema is current, else 503; workers reported, never
required) and ``GET /metrics`` (Prometheus text format). ``/health`` and ``/version`` are in ``api/app.py``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from mindbank.api.deps import Bank
from mindbank.service.metrics import CONTENT_TYPE

router = APIRouter(tags=["monitoring"])


@router.get("/health/live")
def liveness(mb: Bank) -> dict[str, Any]:
    """``LivenessResponse``: answering is the check."""
    return mb.liveness()


@router.get("/health/ready")
def readiness(mb: Bank) -> JSONResponse:
    """Ready (200) or not (503), with the database, schema and worker report."""
    ready, report = mb.readiness()
    return JSONResponse(status_code=200 if ready else 503, content=report)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}}}}},
)
def metrics(mb: Bank) -> Response:
    """Every metric in the Prometheus text exposition format."""
    return Response(content=mb.metrics.render(), media_type=CONTENT_TYPE)
