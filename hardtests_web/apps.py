import logging

from django.apps import AppConfig


class HardtestsWebConfig(AppConfig):
    name = "hardtests_web"
    verbose_name = "HardTests web"

    def ready(self) -> None:
        from hardtests_web.log_redact import PathTokenFilter

        # On the loggers that write request paths, so every handler (Django's own included)
        # sees the token already redacted.
        for name in ("django.request", "django.server"):
            logging.getLogger(name).addFilter(PathTokenFilter())
