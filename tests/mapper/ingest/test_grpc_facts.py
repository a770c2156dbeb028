"""gRPC facts recorded at ingest (mapper.ingest._python_grpc) and read back by the proto rules
without parsing again (mapper.check.pyfacts)."""

from __future__ import annotations

import textwrap

from mapper.check.pyfacts import class_bases, message_uses, servicers
from mapper.ingest.code import parse_source
from mapper.model import Language

SOURCE = textwrap.dedent(
    """
    from app import umd_pb2 as pb
    from app import umd_pb2_grpc


    class Service(umd_pb2_grpc.TranslatorServicer):
        def Create(self, request, context):
            size = request.nbytes + request.align
            request.scratch = 1
            if request.HasField("align"):
                pass
            return pb.Info(
                session_id=request.session_id,
                backend="numpy",
            )

        @staticmethod
        def helper(value):
            return value.size

        def Wait(self, req, context):
            def inner():
                return req.fence_value

            return pb.Empty()


    class Plain:
        def Create(self, request, context):
            return request.other


    def build():
        return pb.Info(session_id=3)
    """
)


def _parsed():
    return parse_source("app/service.py", SOURCE.encode(), Language.PYTHON, "app.service")


def test_extraction_records_request_reads_and_message_keywords() -> None:
    refs = [
        (r.kind, r.target, r.location.line, r.scope)
        for r in _parsed().references
        if r.kind in ("request_read", "message_field")
    ]
    create = "app.service.Service.Create"  # request.scratch is written, not read
    assert refs == [
        ("request_read", "nbytes", 8, create),
        ("request_read", "align", 8, create),
        ("request_read", "HasField", 10, create),
        ("message_field", "Info session_id", 12, create),
        ("request_read", "session_id", 13, create),
        ("message_field", "Info backend", 12, create),
        ("request_read", "fence_value", 23, "app.service.Service.Wait.inner"),
        ("message_field", "Info session_id", 34, "app.service.build"),
    ]


def test_servicers_and_message_uses_come_from_the_stored_parse() -> None:
    parsed = _parsed()
    (service,) = servicers(parsed)
    assert (service.name, service.service, service.line, service.end_line) == (
        "Service",
        "Translator",
        6,
        25,
    )
    methods = {m.name: (m.request, m.reads) for m in service.methods}
    assert methods == {
        "Create": ("request", (("align", 8), ("nbytes", 8), ("session_id", 13))),
        "helper": (None, ()),  # static: no parameter after self
        "Wait": ("req", (("fence_value", 23),)),
    }
    uses = [(u.message, u.keyword, u.line) for u in message_uses(parsed)]
    assert uses == [("Info", "session_id", 12), ("Info", "backend", 12), ("Info", "session_id", 34)]
    assert class_bases(parsed, "app.service.Service") == ["umd_pb2_grpc.TranslatorServicer"]
    assert class_bases(parsed, "app.service.Plain") == []
