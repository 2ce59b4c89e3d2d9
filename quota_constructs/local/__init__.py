"""Local emulator of AWS Batch quota management, in three layers over the scheduling core.

The pure scheduler is ``quota_constructs.scheduling`` (virtual time, no HTTP). Above it, as moto's
backends are built, one folder a layer:

- ``wire/``: ``server`` (WSGI: Batch REST-JSON, SSM and SageMaker JSON 1.1, STS query),
  ``protocol`` and ``query_protocol`` (routes, validation and serialization from botocore's
  service models), ``validation``, ``api_errors`` (the one mapping from domain errors to AWS
  error codes);
- ``handlers/``: one module per operation family (``resources``, ``service_jobs``,
  ``training_jobs``, ``parameters``, ``sts``) reads request parameters (``submit_request``),
  calls typed state methods and renders responses (``job_view``, ``pagination``,
  ``job_filters``);
- ``state/``: ``registry`` (Batch resources, ``fair_share``), ``job_service`` (one scheduler per
  queue), ``parameter_store`` (SSM), ``tags``, ``identities``, ``arns``, ``clock``; they raise
  the domain errors of ``errors``.

Around them: ``emulator`` (one account: builds the rest, dispatches requests under a lock with
counts and ``faults``), organisation provisioning (``provision``), EventBridge events
(``events``), the in-process server for tests and demos (``testing.EmulatorServer``) and its
pytest plugin (``pytest_plugin``). ``quota local`` is ``quota_constructs.commands.local``. See
docs/emulator.md.
"""
