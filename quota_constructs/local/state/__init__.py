"""The emulator's state layer: Batch resources (``registry``, ``fair_share``), service jobs
(``job_service``), SSM parameters (``parameter_store``), tags, identities, ARNs and the clock.
State raises the domain errors of ``errors``; only the wire maps them to API errors."""
