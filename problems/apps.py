from django.apps import AppConfig


class ProblemsConfig(AppConfig):
    name = "problems"
    verbose_name = "Problems and test suites"
