"""``quota recommend --optimize --executor tls://HOST:PORT``: a search on a Dask cluster that
speaks only TLS, with a throw-away CA and certificates made for the test (issue 41 part 5)."""

from __future__ import annotations

import datetime
import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode
from tests.advisor.helpers import TEAMS_FILE

SEARCH = ("recommend", str(TEAMS_FILE), "--optimize", "--days", "1", "--workloads", "2", "--json")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _write_pem(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def throwaway_certificates(directory: Path) -> dict[str, str]:
    """A CA and a certificate it signed for 127.0.0.1 and localhost, as PEM files; valid for a
    day, made with ``cryptography`` (no network, nothing kept)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def certificate(subject: str, key: Any, issuer: str, signer: Any, *, ca: bool) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca = certificate("quota test CA", ca_key, "quota test CA", ca_key, ca=True)
    leaf = certificate("127.0.0.1", leaf_key, "quota test CA", ca_key, ca=False)
    pem = serialization.Encoding.PEM
    key_bytes = leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "ca": _write_pem(directory / "ca.pem", ca.public_bytes(pem)),
        "cert": _write_pem(directory / "cert.pem", leaf.public_bytes(pem)),
        "key": _write_pem(directory / "key.pem", key_bytes),
    }


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Dask cluster (two in-process workers) that accepts only TLS with the CA's
    certificates; Dask's client settings point at them while the test runs (encryption is not
    required of the client: with ``distributed.comm.require-encryption`` a ``dask://`` executor
    fails inside Dask, a case the search does not turn into its one error line yet)."""
    distributed = pytest.importorskip(
        "distributed", reason="Dask distributed is not installed: pip install '.[dask]'"
    )
    import dask

    files = throwaway_certificates(tmp_path_factory.mktemp("tls"))
    security = distributed.Security(
        tls_ca_file=files["ca"],
        tls_scheduler_cert=files["cert"],
        tls_scheduler_key=files["key"],
        tls_worker_cert=files["cert"],
        tls_worker_key=files["key"],
        tls_client_cert=files["cert"],
        tls_client_key=files["key"],
        require_encryption=True,
    )
    client_settings = {
        "distributed.comm.tls.ca-file": files["ca"],
        "distributed.comm.tls.client.cert": files["cert"],
        "distributed.comm.tls.client.key": files["key"],
    }
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tls",
            host="127.0.0.1",
            security=security,
            dashboard_address=None,
        ) as cluster,
        dask.config.set(client_settings),
    ):
        assert cluster.scheduler_address.startswith("tls://")
        yield cluster


def test_a_search_over_tls_gives_the_process_pools_results_exactly(tls_cluster: Any) -> None:
    before = tls_cluster.scheduler.transition_counter
    code, over_tls, err = run(*SEARCH, "--executor", tls_cluster.scheduler_address)
    assert code == 0, err
    assert tls_cluster.scheduler.transition_counter > before  # the candidates ran there
    code, on_processes, err = run(*SEARCH, "--workers", "2")
    assert code == 0, err

    assert json.loads(over_tls) == json.loads(on_processes)


def test_the_tls_cluster_refuses_a_plain_tcp_client(tls_cluster: Any) -> None:
    code, _, err = run(
        *SEARCH,
        "--executor",
        "dask://" + tls_cluster.scheduler_address.removeprefix("tls://"),
        "--result-timeout",
        "10",
    )

    assert code == ExitCode.UNAVAILABLE
    assert "could not reach the Dask scheduler" in err and "Traceback" not in err
