"""The emulator's wire layer: HTTP front (``server``), protocols and validation from botocore's
service models (``protocol``, ``query_protocol``, ``validation``), and the one mapping from
domain errors to AWS API errors (``api_errors``). Handlers never see HTTP."""
