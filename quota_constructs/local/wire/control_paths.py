"""The emulator's own HTTP endpoints (beside the AWS APIs), importable without the server."""

HEALTH_PATH = "/_quota/health"
ADVANCE_PATH = "/_quota/advance"
EXPLAIN_PREFIX = "/_quota/jobs/"
