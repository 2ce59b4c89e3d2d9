"""Local emulator of AWS Batch quota management, in three layers over the scheduling core.

The pure scheduler is ``quota_constructs.scheduling`` (virtual time, no HTTP). Above it, as moto's
backends are built:

- wire: ``server`` (WSGI, Batch REST-JSON and SSM JSON 1.1), ``protocol`` (routes, validation
  and serialization from botocore's service models), ``api_errors`` (the one mapping from
  domain errors to AWS error codes), ``emulator`` (one account: builds the rest, dispatches
  requests under a lock with counts and ``faults``);
- handlers: ``handlers.resources``, ``handlers.service_jobs``, ``handlers.parameters`` read
  request parameters, call typed state methods and render responses;
- state: ``registry`` (Batch resources), ``job_service`` (one scheduler per queue),
  ``parameter_store`` (SSM), ``tags``, ``clock``, ``arns``; they raise ``errors``.

Around them: organisation provisioning (``provision``), the in-process server for tests and
demos (``testing.EmulatorServer``), its pytest plugin (``pytest_plugin``) and
``quota local serve`` (``cli``). See docs/emulator.md.
"""
