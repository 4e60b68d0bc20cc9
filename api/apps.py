from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "Verification API"

    def ready(self) -> None:
        from api.after_response import connect

        connect()
