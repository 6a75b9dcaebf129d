"""Where a template's work runs, checked when the report is planned, with the other parameters (`plan.plan_report`),
before papermill starts a kernel: the Bayesian template's `bayes_executor` (local or dask) and `scheduler` (a Dask
scheduler's address), and the address of `riskreport batch --scheduler`.

A Dask address is `[PROTOCOL://]HOST:PORT` (PROTOCOL tcp, the default, tls, ws, wss or ucx; HOST a name, an IPv4
address or an [IPv6] address; PORT 1-65535) or `inproc://NAME`, as Dask distributed reads it."""

from __future__ import annotations

import importlib.util
import re

from riskreport.errors import ParameterError, RiskReportError

EXECUTORS = ("local", "dask")  # the values `bayes.chains.check_executor` accepts
PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
HOST = re.compile(r"\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_executor_options(parameters: dict) -> None:
    """`bayes_executor` one of `EXECUTORS`; with dask, a well-formed `scheduler` address and Dask distributed
    installed; a `scheduler` only with dask. Parameters a template does not declare are not looked at."""
    if "bayes_executor" not in parameters:
        return
    executor, scheduler = parameters["bayes_executor"], parameters.get("scheduler")
    if executor not in EXECUTORS:
        raise ParameterError(
            f"bayes_executor must be local (this machine) or dask (the Dask cluster at `scheduler`), got {executor!r}."
        )
    if executor == "local":
        if scheduler is not None:
            raise ParameterError(
                f"scheduler {scheduler!r} is only used with bayes_executor dask: add -p bayes_executor dask, "
                "or leave scheduler out to sample on this machine."
            )
        return
    if scheduler is None or scheduler == "":
        raise ParameterError(
            "bayes_executor dask needs the Dask scheduler's address: -p scheduler tcp://HOST:8786 "
            '(a jobs file: scheduler = "tcp://HOST:8786").'
        )
    check_dask_address(scheduler, "scheduler")
    if importlib.util.find_spec("distributed") is None:
        raise RiskReportError("bayes_executor dask needs Dask distributed: pip install 'riskreport[dask]'.")


def check_dask_address(address, where: str) -> str:
    """`address` if it is a Dask scheduler address (see the module); `ParameterError` naming `where` otherwise."""
    problem = _address_problem(address)
    if problem:
        raise ParameterError(
            f"{where} {address!r}: {problem}; expected a Dask scheduler address [PROTOCOL://]HOST:PORT, "
            "e.g. tcp://10.0.0.5:8786."
        )
    return address


def _address_problem(address) -> str | None:
    if not isinstance(address, str) or not address.strip():
        return "not an address"
    protocol, separator, rest = address.partition("://")
    if not separator:
        protocol, rest = "tcp", address
    if protocol not in PROTOCOLS:
        return f"unknown protocol {protocol!r} (one of {', '.join(PROTOCOLS)})"
    if protocol == "inproc":
        return None if rest else "no name after inproc://"
    host, colon, port = rest.rpartition(":")
    if not colon:
        return "no port number"
    if not HOST.fullmatch(host):
        return f"host {host!r} is not a host name or IP address" if host else "no host"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return f"port {port!r} is not a number from 1 to 65535"
    return None
