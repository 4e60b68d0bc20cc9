"""The HTTP API app: API tokens, the verification API (/api/v1/, built in `api.v1`) and its pages."""
