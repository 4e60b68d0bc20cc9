from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"
    verbose_name = "Test generation"

    def ready(self) -> None:
        from django.urls import reverse

        from problems.page_links import page_link_register

        # The generation pages that problem pages link to (problems cannot import generation).
        for name in ("regenerate", "problem_runs", "kit_edit", "run_detail", "kit_revert", "campaign_detail",
                     "campaign_list"):
            page_link_register(name, lambda *args, _name=name: reverse(f"generation:{_name}", args=args))
