"""A model field whose pydantic model is imported on first use: the cloud blocks of a cluster definition.

``ClusterSpec`` has an ``aws``, a ``gcp`` and an ``azure`` block. Building their models (``fabric.model.cloud``) costs
about 60 ms, which every on-prem run paid without having any of the blocks. ``Deferred`` keeps the field's type for
pyright (``if TYPE_CHECKING``) and gives pydantic a validator that imports the model only when a block is there:

- a block is validated by the model itself, so every error keeps its location below the field (pydantic-core nests
  the inner ``ValidationError``'s errors under the field's path: ``aws.region``), and the loader maps it to a line;
- JSON input (the loader's path: ``model_validate_json(..., strict=True)``) is validated as strict JSON, Python input
  (``model_validate`` of a dict, as tests build specs) as pydantic's lax Python mode;
- the JSON Schema is the model's own (``model_json_schema`` writes the same ``$ref`` and ``$defs`` as a plain field).

Example:
    >>> from typing import Annotated
    >>> from fabric.model.base import SpecModel
    >>> class Spec(SpecModel):
    ...     aws: Annotated[object, Deferred("fabric.model.cloud", "AwsSpec")] | None = None
    >>> Spec.model_validate({}).aws is None
    True
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from pydantic_core import core_schema

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic._internal._schema_generation_shared import GenerateJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue


@dataclass(frozen=True, slots=True)
class Deferred:
    """Pydantic marker (``Annotated[object, Deferred(module, name)]``): validate with ``module.name``, imported on first use."""

    module: str
    name: str

    def model(self) -> type[BaseModel]:
        """The model class (imports its module the first time)."""
        found: type[BaseModel] = getattr(importlib.import_module(self.module), self.name)
        return found

    def __get_pydantic_core_schema__(self, source: object, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """A validator function that hands the value to the model; the model instance passes the inner ``any``.

        The inner schema carries a ``ref`` only so that the JSON Schema gives the field no title of its own, as for
        a plain model field (pydantic's ``field_title_should_be_set``); nothing refers to it.
        """
        return core_schema.with_info_before_validator_function(
            self._validate,
            core_schema.any_schema(ref=f"deferred:{self.module}.{self.name}"),
            serialization=core_schema.plain_serializer_function_ser_schema(self._serialize, info_arg=True),
        )

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The model's JSON Schema, as a ``$ref`` to its ``$defs`` entry like any nested model.

        ``handler`` itself would inline the model (it files ``$defs`` only for the schema it was made for), so this
        goes through the generator's ``generate_inner``, which files the model under ``$defs`` as for a plain field.
        """
        generator = cast("GenerateJsonSchemaHandler", handler).generate_json_schema
        return generator.generate_inner(self.model().__pydantic_core_schema__)

    def _validate(self, value: object, info: core_schema.ValidationInfo) -> BaseModel:
        model = self.model()
        if isinstance(value, model):
            return value  # an instance passes as it is, as for a plain model field (revalidate_instances="never")
        if info.mode == "json":
            return model.model_validate_json(json.dumps(value), strict=True, context=info.context)
        return model.model_validate(value, context=info.context)

    @staticmethod
    def _serialize(value: BaseModel, info: core_schema.SerializationInfo) -> dict[str, Any]:
        return value.model_dump(mode=info.mode, by_alias=bool(info.by_alias), exclude_none=info.exclude_none)
