"""Local emulator of AWS Batch quota management.

``core`` is the pure scheduler (virtual time, no HTTP). The rest is the HTTP side: a WSGI app
speaking Batch's REST-JSON protocol and SSM's JSON 1.1 protocol (``server``, driven by botocore's
service models in ``protocol``), the resource registry (``backend``), service jobs on one
scheduler per queue (``jobs``), SSM parameters (``ssm``), organisation provisioning
(``provision``), the in-process server for tests and demos (``testing.EmulatorServer``), its
pytest plugin (``pytest_plugin``) and ``quota local serve`` (``cli``). See docs/emulator.md.
"""
