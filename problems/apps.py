from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProblemsConfig(AppConfig):
    name = "problems"
    verbose_name = "Problems and test suites"

    def ready(self) -> None:
        from problems.selectors import search_index_install

        # SQLite drops triggers when a migration remakes problems_problem; put them back.
        post_migrate.connect(search_index_install, sender=self, dispatch_uid="problems-search-index")
