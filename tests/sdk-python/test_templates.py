"""Templates of a team through the official Python SDK (docs/local-backend.md
"Templates"): create, list, get, wait until ready, claim from, delete. The SDK's
`Template` requires `spec.mainContainer` (`image`, `resources.memory`:
apispec/models/sandbox_template_spec.py, container_spec.py, resource_quota.py
`from_dict`), so every template the server answers, `default` included, must
carry one or the SDK raises KeyError on list and get."""
from __future__ import annotations

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models import (
    ContainerSpec,
    ResourceQuota,
    SandboxTemplateSpec,
    TemplateCreateRequest,
)

TPL = "/api/v1/templates"


def test_public_default_decodes(h):
    listed = h.sdk.list_templates()
    h.expect_last("GET", TPL, 200)
    by_id = {t.template_id: t for t in listed}
    assert by_id["default"].scope == "public"
    assert by_id["default"].spec.main_container.resources.memory
    got = h.sdk.get_template("default")
    h.expect_last("GET", f"{TPL}/default", 200)
    assert got.template_id == "default"


def test_spec_without_main_container_decodes(h):
    r = h.raw("POST", TPL, body={"template_id": "bare-spec", "spec": {"description": "d"}})
    assert r.status_code == 201, r.text
    try:
        got = h.sdk.get_template("bare-spec")
        assert got.spec.description == "d"
        assert got.spec.main_container.image
    finally:
        h.raw("DELETE", f"{TPL}/bare-spec")


def test_create_get_claim_delete(h):
    spec = SandboxTemplateSpec(main_container=ContainerSpec(
        image="python:3.12", resources=ResourceQuota(memory="1Gi")), description="mine")
    made = h.sdk.create_template(TemplateCreateRequest(template_id="py-sdk-tpl", spec=spec))
    h.expect_last("POST", TPL, 201)
    assert (made.template_id, made.scope) == ("py-sdk-tpl", "team")
    assert made.spec.main_container.image == "python:3.12"  # kept as given
    assert h.sdk.wait_template_ready("py-sdk-tpl").template_id == "py-sdk-tpl"
    assert "py-sdk-tpl" in [t.template_id for t in h.sdk.list_templates()]

    sb = h.sdk.sandboxes.claim("py-sdk-tpl")
    h.track(sb.id)
    with pytest.raises(APIError) as e:  # 409 is not declared by the SDK: no code
        h.sdk.delete_template("py-sdk-tpl")  # (apispec/api/templates/delete_api_v1_templates_id.py)
    assert e.value.status_code == 409
    h.sdk.sandboxes.delete(sb.id)
    h.sdk.delete_template("py-sdk-tpl")
    h.expect_last("DELETE", f"{TPL}/py-sdk-tpl", 200)
    with pytest.raises(APIError) as e:
        h.sdk.get_template("py-sdk-tpl")
    assert (e.value.status_code, e.value.code) == (404, "not_found")
