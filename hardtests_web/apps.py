from django.apps import AppConfig


class HardtestsWebConfig(AppConfig):
    name = "hardtests_web"
    verbose_name = "HardTests web"
