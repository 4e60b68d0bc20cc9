from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review and evaluation"

    def ready(self) -> None:
        from problems.list_extensions import list_extension_register
        from review.studies.list_status import REVIEW_STATUS

        list_extension_register(REVIEW_STATUS)
