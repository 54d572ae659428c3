from django.urls import path

from releases import views

app_name = "releases"
urlpatterns = [
    path("", views.data_page, name="page"),
    path("<str:day>/<str:name>", views.release_download, name="download"),
]
