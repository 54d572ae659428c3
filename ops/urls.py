from django.urls import path

from ops import views

urlpatterns = [path("", views.ops_page, name="ops")]
